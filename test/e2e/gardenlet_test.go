//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	gardeneretcd "github.com/gardener/gardener/pkg/component/etcd/etcd"
	secretsutils "github.com/gardener/gardener/pkg/utils/secrets"
	secretsmanager "github.com/gardener/gardener/pkg/utils/secrets/manager"
	"github.com/go-logr/logr"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	etcdcontroller "github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/heal"
	"github.com/gardener-etcd/gardener-etcd/pkg/seedworkflow"
)

// Our druid dropped into a Gardener landscape by image vector: gardenlet keeps deploying it (Gardener's own
// bootstrapper, ClusterRole, webhook configuration, OperatorConfiguration and upstream druid's CRDs) and keeps
// writing Etcds with Gardener's own etcd component and secrets manager. The specs run in order on one
// shoot; the suite's druid is put back afterwards.
var _ = Describe("under gardenlet's deployment", Ordered, func() {
	var (
		gardenlet *gardenletDruid
		env       *seedworkflow.Env
		shoot     *gardenletShoot
	)

	BeforeAll(func(ctx SpecContext) {
		measure("deploy druid from gardenlet's objects", func() { gardenlet = deployDruidAsGardenlet(ctx) })
		DeferCleanup(func(ctx SpecContext) { gardenlet.restore(ctx) }, NodeTimeout(10*time.Minute))
		env = newShoot(ctx, "gardenlet", 0)
		shoot = newGardenletShoot(ctx, env)
		DeferCleanup(func(ctx SpecContext) { shoot.destroy(ctx) }, NodeTimeout(8*time.Minute))
	}, NodeTimeout(15*time.Minute))

	It("runs druid with gardenlet's Deployment: only --config and IMAGEVECTOR_OVERWRITE", func(ctx SpecContext) {
		d := &appsv1.Deployment{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: seedworkflow.GardenNamespace, Name: gardeneretcd.Druid}, d)).To(Succeed())
		Expect(d.Spec.Template.Spec.Containers).To(HaveLen(1))
		container := d.Spec.Template.Spec.Containers[0]
		Expect(container.Command).To(BeEmpty())
		Expect(container.Args).To(Equal([]string{"--config=/operator_config/config.yaml"}))
		Expect(container.Env).To(ConsistOf(HaveField("Name", "IMAGEVECTOR_OVERWRITE")))
		Expect(container.Image).To(Equal(seed.Images()["etcd-druid"]))
	})

	It("brings etcd-main up Ready as gardenlet writes it, with a full snapshot in the store", func(ctx SpecContext) {
		measure("gardenlet's etcd-main (1 member) to Ready", func() {
			shoot.deploy(ctx, 1, false)
			Expect(seedworkflow.WaitMembers(ctx, env, etcd.RoleMain, 1, false)).To(Succeed())
			expectCondition(ctx, env, etcd.RoleMain, druidv1alpha1.ConditionTypeReady, druidv1alpha1.ConditionTrue, "")
		})
		obj := getEtcd(ctx, env, etcd.RoleMain)
		By("the Etcd carries Gardener's hashed secret names, CA bundle and network labels")
		Expect(obj.Spec.Etcd.ClientUrlTLS.TLSCASecretRef.Name).To(HavePrefix("ca-etcd-bundle-"))
		Expect(obj.Spec.Etcd.ClientUrlTLS.ServerTLSSecretRef.Name).To(MatchRegexp(`^etcd-server-main-[0-9a-f]+$`))
		Expect(obj.Spec.Labels).To(HaveKeyWithValue(v1beta1constants.LabelNetworkPolicyToDNS, v1beta1constants.LabelNetworkPolicyAllowed))
		expectCondition(ctx, env, etcd.RoleMain, druidv1alpha1.ConditionTypeBackupReady, druidv1alpha1.ConditionTrue, "")
		Eventually(func() []string { return shoot.fullSnapshots(ctx) }).WithContext(ctx).WithTimeout(waitTimeout).WithPolling(pollInterval).
			ShouldNot(BeEmpty(), "a full snapshot under %s", shoot.storePrefix())
		fmt.Fprintf(GinkgoWriter, "full snapshots: %v\n", shoot.fullSnapshots(ctx))
	})

	It("lets a StatefulSet of another namespace scale through gardenlet's webhook configuration", func(ctx SpecContext) {
		other := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "gardenlet-unrelated"}}
		Expect(env.Client.Create(ctx, other)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(env.Client.Delete(ctx, other))).To(Succeed()) })
		labels := map[string]string{"app": "unrelated"}
		sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "unrelated", Namespace: other.Name},
			Spec: appsv1.StatefulSetSpec{Replicas: ptr.To(int32(0)), Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: seed.Images()["etcd-wrapper"]}}}}}}
		Expect(env.Client.Create(ctx, sts)).To(Succeed())
		// Scaling between 0 and 0 runs no pod; the apiserver still calls the scale webhook (failing closed).
		// The StatefulSet controller writes its status meanwhile: a conflict is retried, a refusal is not.
		for _, replicas := range []int32{2, 0} {
			Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
				scale := &autoscalingv1.Scale{}
				if err := env.Client.SubResource("scale").Get(ctx, sts, scale); err != nil {
					return err
				}
				scale.Spec.Replicas = replicas
				return env.Client.SubResource("scale").Update(ctx, sts, client.WithSubResourceBody(scale))
			})).To(Succeed(), "scaling %s/%s to %d", sts.Namespace, sts.Name, replicas)
		}
	})

	It("scales 1 → 3 with peer TLS through Gardener's HA path without a false quorum loss", func(ctx SpecContext) {
		_, err := seedworkflow.WriteData(ctx, env, etcd.RoleMain, 100)
		Expect(err).NotTo(HaveOccurred())
		readiness := watchReadiness(ctx, env, etcd.RoleMain)
		w := seedworkflow.StartWriter(ctx, env, etcd.RoleMain, "/e2e/gardenlet/")
		measure("gardenlet's scale-up 1 → 3 with peer TLS", func() {
			shoot.deploy(ctx, 3, true)
			Expect(seedworkflow.WaitMembers(ctx, env, etcd.RoleMain, 3, true)).To(Succeed())
			expectCondition(ctx, env, etcd.RoleMain, druidv1alpha1.ConditionTypeReady, druidv1alpha1.ConditionTrue, "")
		})
		acksAfterScale := w.AckedCount() + 20
		Eventually(w.AckedCount).WithContext(ctx).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(BeNumerically(">=", acksAfterScale))
		acked, failures, gap := w.Stop()
		quorumLost := readiness.stop()
		fmt.Fprintf(GinkgoWriter, "writer: %d acknowledged, %d failed attempts, longest gap %s\n", len(acked), failures, gap)
		for _, o := range quorumLost {
			fmt.Fprintf(GinkgoWriter, "Ready=False/QuorumLost at %s: %s (member %s ready: %t)\n", o.at.Format(time.TimeOnly), o.message, o.member, o.memberReady)
		}
		// Fails unless every acknowledged write is on every member; present also counts writes that were stored
		// although their acknowledgement did not reach the writer.
		present := expectKeysOnEveryMember(ctx, env, etcd.RoleMain, "/e2e/gardenlet/", 3, acked)
		AddReportEntry("gardenlet scale-up writes", fmt.Sprintf("%d acknowledged (none lost), %d present on every member, %d failed attempts, longest gap %s; %d QuorumLost observations",
			len(acked), present, failures, gap, len(quorumLost)))
		for _, o := range quorumLost {
			Expect(o.memberReady).To(BeFalse(), "Ready=False/QuorumLost while the single member %s was Ready: %s", o.member, o.message)
		}
		_, err = seedworkflow.CheckData(ctx, env, etcd.RoleMain, 100)
		Expect(err).NotTo(HaveOccurred())
	})

	It("takes a final full snapshot for a client configured like gardenlet's (CA only, no client certificate)", func(ctx SpecContext) {
		before := shoot.fullSnapshots(ctx)
		_, err := seedworkflow.WriteData(ctx, env, etcd.RoleMain, 100)
		Expect(err).NotTo(HaveOccurred())
		measure("gardenlet's final full snapshot", func() {
			Expect(shoot.component(3, true).Snapshot(ctx, gardenletHTTPClient(ctx, env))).To(Succeed())
		})
		Eventually(func() []string { return shoot.fullSnapshots(ctx) }).WithContext(ctx).WithTimeout(waitTimeout).WithPolling(pollInterval).
			Should(ContainElement(Not(BeElementOf(before))), "a new full snapshot under %s", shoot.storePrefix())
		fmt.Fprintf(GinkgoWriter, "full snapshots: %v\n", shoot.fullSnapshots(ctx))
	})

	It("hibernates through Gardener's Scale(0), stays at 0 through Deploy without replicas, and wakes up through Deploy", func(ctx SpecContext) {
		revision := clusterRevision(ctx, env)
		measure("gardenlet's hibernation: Scale(0), Wait", func() {
			c := shoot.component(3, true)
			Expect(c.Scale(ctx, 0)).To(Succeed())
			Expect(c.Wait(ctx)).To(Succeed())
			Eventually(func(g Gomega) {
				sts := &appsv1.StatefulSet{}
				g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: env.Namespace, Name: etcd.Name(etcd.RoleMain)}, sts)).To(Succeed())
				g.Expect(sts.Status.Replicas).To(BeZero(), "member pods still running")
			}).WithContext(ctx).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(Succeed())
		})
		Expect(etcdEventReasons(ctx, env, etcd.RoleMain)).To(ContainElement(etcdcontroller.EventReasonFullSnapshotBeforeHibernation))

		// A shoot reconcile while hibernated: gardenlet deploys without replicas, which keeps 0.
		c := shoot.componentWith(shoot.c, shoot.mainValues(nil, true))
		Expect(c.Deploy(ctx)).To(Succeed())
		Expect(c.Wait(ctx)).To(Succeed())
		Expect(getEtcd(ctx, env, etcd.RoleMain).Spec.Replicas).To(BeZero(), "still hibernated")

		measure("gardenlet's wake-up: Deploy with 3 replicas, Wait", func() {
			shoot.deploy(ctx, 3, true)
			Expect(seedworkflow.WaitMembers(ctx, env, etcd.RoleMain, 3, true)).To(Succeed())
		})
		Expect(clusterRevision(ctx, env)).To(Equal(revision), "woke up from the volumes at the revision of hibernation")
		_, err := seedworkflow.CheckData(ctx, env, etcd.RoleMain, 100)
		Expect(err).NotTo(HaveOccurred())
	})

	It("stops a quorum loss recovery it may not run at a condition naming the permission, deleting nothing", func(ctx SpecContext) {
		leader := leaderOrdinal(ctx, env, etcd.RoleMain)
		obj := getEtcd(ctx, env, etcd.RoleMain)
		claims := claimUIDs(ctx, env)
		var followers []int
		for ordinal := range 3 {
			if ordinal != leader {
				followers = append(followers, ordinal)
			}
		}
		By(fmt.Sprintf("wiping the volumes of the followers %v and killing their pods; the leader is %d", followers, leader))
		for _, ordinal := range followers {
			wipeMemberData(ctx, env, etcd.RoleMain, ordinal)
		}
		for _, ordinal := range followers {
			deletePod(ctx, env, druidv1alpha1.PodName(obj, ordinal))
		}
		var stopped *druidv1alpha1.Condition
		measure("quorum loss → recovery refused for a missing permission", func() {
			stopped = expectConditionWithin(ctx, env, recoveryTimeout, etcd.RoleMain, heal.ConditionTypeQuorumLossRecovery,
				druidv1alpha1.ConditionFalse, heal.ReasonRecoveryPermissionsMissing)
		})
		fmt.Fprintf(GinkgoWriter, "QuorumLossRecovery=False/%s: %s\n", stopped.Reason, stopped.Message)
		AddReportEntry("gardenlet quorum loss", "stopped: "+stopped.Message)
		Expect(stopped.Message).To(ContainSubstring("delete persistentvolumeclaims"))
		// Gardenlet's role grants core events only: the refusal is there for an operator to see.
		Eventually(func() []string { return etcdEventReasons(ctx, env, etcd.RoleMain) }).WithContext(ctx).WithTimeout(waitTimeout).
			WithPolling(pollInterval).Should(ContainElement(heal.EventReasonQuorumLossRecovery))
		Expect(claimUIDs(ctx, env)).To(Equal(claims), "no claim deleted or replaced")
		sts := &appsv1.StatefulSet{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: env.Namespace, Name: obj.Name}, sts)).To(Succeed())
		Expect(sts.Spec.Replicas).To(Equal(ptr.To(int32(3))), "the StatefulSet was not scaled down")
		Expect(memberVolumeEntries(ctx, env, obj, leader)).NotTo(BeEmpty(), "the leader's data is still on its volume")
	})
})

// gardenletShoot is a shoot's etcd-main as gardenlet deploys it: Gardener's etcd component with the shoot's
// secrets manager (the CAs the botanist generates) and the backup configuration the botanist derives from
// the BackupEntry's etcd backup secret.
type gardenletShoot struct {
	env    *seedworkflow.Env
	c      client.Client
	sm     secretsmanager.Interface
	backup *gardeneretcd.BackupConfig
}

func newGardenletShoot(ctx context.Context, env *seedworkflow.Env) *gardenletShoot {
	c := gardenerClient()
	sm, err := secretsmanager.New(ctx, logr.Discard(), clock.RealClock{}, c, gardenerIdentity, secretsmanager.WithNamespaces(env.Namespace))
	Expect(err).NotTo(HaveOccurred())
	// The botanist's CAs of etcd (pkg/gardenlet/operation/botanist/secrets.go).
	for _, ca := range []*secretsutils.CertificateSecretConfig{
		{Name: v1beta1constants.SecretNameCAETCD, CommonName: "etcd", CertType: secretsutils.CACert},
		{Name: v1beta1constants.SecretNameCAETCDPeer, CommonName: "etcd-peer", CertType: secretsutils.CACert},
	} {
		_, err := sm.Generate(ctx, ca, secretsmanager.Rotate(secretsmanager.KeepOld))
		Expect(err).NotTo(HaveOccurred())
	}
	// The BackupEntry's etcd backup secret, which the botanist reads the bucket from.
	entry := &extensionsv1alpha1.BackupEntry{}
	Expect(env.Client.Get(ctx, client.ObjectKey{Name: env.BackupEntryName}, entry)).To(Succeed())
	Expect(entry.Status.EtcdBackupSecretRef).NotTo(BeNil())
	ref := client.ObjectKey{Namespace: entry.Status.EtcdBackupSecretRef.Namespace, Name: entry.Status.EtcdBackupSecretRef.Name}
	Expect(ref.Namespace).To(Equal(env.Namespace), "Gardener's Etcd names a backup secret of its own namespace")
	secret := &corev1.Secret{}
	Expect(env.Client.Get(ctx, ref, secret)).To(Succeed())
	return &gardenletShoot{env: env, c: c, sm: sm, backup: &gardeneretcd.BackupConfig{
		// A seed backing up to S3 has Gardener's provider "aws"; the bucket is the secret's bucketName.
		Provider:      "aws",
		SecretRefName: ref.Name,
		Prefix:        env.BackupEntryName,
		Container:     string(secret.Data[v1beta1constants.DataKeyBackupBucketName]),
		// The botanist's schedule for a shoot without a maintenance window is daily; a full snapshot is
		// also taken at the first start.
		FullSnapshotSchedule: "0 */24 * * *",
	}}
}

// component is Gardener's etcd component of etcd-main, with the values the botanist gives it.
func (s *gardenletShoot) component(replicas int32, ha bool) gardeneretcd.Interface {
	return s.componentWith(s.c, s.mainValues(ptr.To(replicas), ha))
}

// mainValues are the values the botanist gives etcd-main's component; replicas nil while the shoot is
// hibernated (the component then keeps what the Etcd has).
func (s *gardenletShoot) mainValues(replicas *int32, ha bool) gardeneretcd.Values {
	return gardeneretcd.Values{
		Role:     v1beta1constants.ETCDRoleMain,
		Class:    gardeneretcd.ClassImportant,
		Replicas: replicas,
		// The botanist's size for etcd-main: Gardener's quota of 8Gi must fit (druid refuses a larger quota).
		StorageCapacity:         "25Gi",
		HighAvailabilityEnabled: ha,
		BackupConfig:            s.backup,
	}
}

// componentWith is Gardener's etcd component writing through c, with values completed by what the botanist
// gives every etcd of a shoot (priority class, runtime version, maintenance window).
func (s *gardenletShoot) componentWith(c client.Client, values gardeneretcd.Values) gardeneretcd.Interface {
	values.PriorityClassName = seedworkflow.PriorityClassName
	values.RuntimeKubernetesVersion = seedVersion()
	values.MaintenanceTimeWindow = gardencorev1beta1.MaintenanceTimeWindow{Begin: "220000+0000", End: "230000+0000"}
	return gardeneretcd.New(logr.Discard(), c, s.env.Namespace, s.sm, values)
}

// deploy runs the component's Deploy and Wait as the shoot flow does.
func (s *gardenletShoot) deploy(ctx context.Context, replicas int32, ha bool) {
	c := s.component(replicas, ha)
	Expect(c.Deploy(ctx)).To(Succeed())
	Expect(c.Wait(ctx)).To(Succeed())
}

// destroy deletes etcd-main as gardenlet does (Gardener's deletion confirmation) and waits until druid
// removed it, before the shoot's namespace goes.
func (s *gardenletShoot) destroy(ctx context.Context) {
	destroyGardenerEtcd(ctx, s.env, s.component(1, false), etcd.RoleMain)
}

// destroyGardenerEtcd deletes the Etcd of role with Gardener's component c (its deletion confirmation) and
// waits until druid removed it. After a failed spec it first prints the Etcds and keeps the shoot's pod
// logs, which go with the pods.
func destroyGardenerEtcd(ctx context.Context, env *seedworkflow.Env, c gardeneretcd.Interface, role string) {
	if CurrentSpecReport().Failed() {
		printEtcdStatus(ctx, env)
		keepLogs(seed.StateDir(), seed.PodLogDirs(env.Namespace))
	}
	Expect(c.Destroy(ctx)).To(Succeed())
	Eventually(func() bool {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: env.Namespace, Name: etcd.Name(role)}, &druidv1alpha1.Etcd{})
		return client.IgnoreNotFound(err) == nil && err != nil
	}).WithContext(ctx).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(BeTrue(), "%s removed by druid", etcd.Name(role))
}

// storePrefix is where Gardener's Etcd keeps etcd-main's backups.
func (s *gardenletShoot) storePrefix() string { return s.storePrefixOf(etcd.RoleMain) }

// storePrefixOf is where Gardener's component puts the backups of role: <BackupEntry>/etcd-<role>/.
func (s *gardenletShoot) storePrefixOf(role string) string {
	return s.backup.Prefix + "/" + etcd.Name(role) + "/"
}

// fullSnapshots are the keys of the full snapshots in etcd-main's store.
func (s *gardenletShoot) fullSnapshots(ctx context.Context) []string {
	return s.fullSnapshotsOf(ctx, etcd.RoleMain)
}

// fullSnapshotsOf are the keys of the full snapshots of role in the shoot's bucket of the seed's S3.
func (s *gardenletShoot) fullSnapshotsOf(ctx context.Context, role string) []string {
	objects, err := seedworkflow.ListBucket(ctx, s.env, s.backup.Container)
	Expect(err).NotTo(HaveOccurred())
	keys := make([]string, 0, len(objects))
	for _, o := range objects {
		keys = append(keys, o.Key)
	}
	return fullSnapshotKeys(keys, s.storePrefixOf(role))
}

// fullSnapshotKeys are the keys of full snapshots under prefix, sorted.
func fullSnapshotKeys(keys []string, prefix string) []string {
	var full []string
	for _, k := range keys {
		if strings.HasPrefix(k, prefix) && strings.Contains(k, "/Full-") {
			full = append(full, k)
		}
	}
	sort.Strings(full)
	return full
}

// gardenletHTTPClient is the HTTP client gardenlet calls the sidecar with: it trusts the etcd CA bundle and
// presents no client certificate. Its connections go to a member pod, since the seed's service names do
// not resolve on the host; TLS still verifies the client service's name.
func gardenletHTTPClient(ctx context.Context, env *seedworkflow.Env) *http.Client {
	obj := getEtcd(ctx, env, etcd.RoleMain)
	bundle := &corev1.Secret{}
	Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: env.Namespace, Name: obj.Spec.Etcd.ClientUrlTLS.TLSCASecretRef.Name}, bundle)).To(Succeed())
	roots := x509.NewCertPool()
	Expect(roots.AppendCertsFromPEM(bundle.Data[secretsutils.DataKeyCertificateBundle])).To(BeTrue(), "CA bundle %s", bundle.Name)
	dial := func(ctx context.Context, network, address string) (net.Conn, error) {
		_, port, err := net.SplitHostPort(address)
		if err != nil {
			return nil, err
		}
		ips, err := seedworkflow.MemberIPs(ctx, env, etcd.RoleMain)
		if err != nil {
			return nil, err
		}
		var d net.Dialer
		var last error
		for _, ip := range ips {
			conn, err := d.DialContext(ctx, network, net.JoinHostPort(ip, port))
			if err == nil {
				return conn, nil
			}
			last = err
		}
		return nil, fmt.Errorf("no member of etcd-main reachable on port %s: %v", port, last)
	}
	return &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{DialContext: dial,
		TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}}
}

// quorumLostObservation is one version of the Etcd with Ready=False/QuorumLost.
type quorumLostObservation struct {
	at          time.Time
	message     string
	member      string
	memberReady bool
}

// readinessWatch watches every version of an Etcd (a watch misses none, unlike polling) and records those
// whose Ready condition is False with reason QuorumLost, with whether member 0 was Ready in the same status.
type readinessWatch struct {
	mu       sync.Mutex
	observed []quorumLostObservation
	cancel   context.CancelFunc
	done     chan struct{}
}

func watchReadiness(ctx context.Context, env *seedworkflow.Env, role string) *readinessWatch {
	wc, err := client.NewWithWatch(env.Seed.RESTConfig(), client.Options{Scheme: seedworkflow.Scheme})
	Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r := &readinessWatch{cancel: cancel, done: make(chan struct{})}
	name := etcd.Name(role)
	list := &druidv1alpha1.EtcdList{}
	Expect(wc.List(ctx, list, client.InNamespace(env.Namespace))).To(Succeed())
	rv := list.ResourceVersion
	go func() {
		defer close(r.done)
		for ctx.Err() == nil {
			w, err := wc.Watch(ctx, &druidv1alpha1.EtcdList{}, client.InNamespace(env.Namespace), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv}})
			if err != nil {
				time.Sleep(pollInterval)
				continue
			}
			for ev := range w.ResultChan() {
				obj, ok := ev.Object.(*druidv1alpha1.Etcd)
				if !ok || ev.Type == watch.Error || obj.Name != name {
					continue
				}
				rv = obj.ResourceVersion
				r.observe(obj)
			}
		}
	}()
	return r
}

func (r *readinessWatch) observe(obj *druidv1alpha1.Etcd) {
	c := druidv1alpha1.FindCondition(obj.Status.Conditions, druidv1alpha1.ConditionTypeReady)
	if c == nil || c.Status != druidv1alpha1.ConditionFalse || c.Reason != druidv1alpha1.ReasonQuorumLost {
		return
	}
	member := druidv1alpha1.PodName(obj, 0)
	o := quorumLostObservation{at: time.Now(), message: c.Message, member: member}
	for _, m := range obj.Status.Members {
		if m.Name == member && m.Status == druidv1alpha1.EtcdMemberStatusReady {
			o.memberReady = true
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := len(r.observed); n == 0 || r.observed[n-1].message != o.message || r.observed[n-1].memberReady != o.memberReady {
		r.observed = append(r.observed, o)
	}
}

func (r *readinessWatch) stop() []quorumLostObservation {
	r.cancel()
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.observed
}

// memberVolumeEntries lists the top level of a member's volume on its node.
func memberVolumeEntries(ctx context.Context, env *seedworkflow.Env, obj *druidv1alpha1.Etcd, ordinal int) []string {
	claim := &corev1.PersistentVolumeClaim{}
	Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: env.Namespace,
		Name: fmt.Sprintf("%s-%s-%d", druidv1alpha1.VolumeClaimTemplateName(obj), obj.Name, ordinal)}, claim)).To(Succeed())
	pv := &corev1.PersistentVolume{}
	Expect(env.Client.Get(ctx, client.ObjectKey{Name: claim.Spec.VolumeName}, pv)).To(Succeed())
	Expect(pv.Spec.Local).NotTo(BeNil())
	entries, err := os.ReadDir(pv.Spec.Local.Path)
	Expect(err).NotTo(HaveOccurred())
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}
