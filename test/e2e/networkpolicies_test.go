//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd/gardenersecrets"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
	"github.com/gardener-etcd/gardener-etcd/pkg/imagebuild"
	"github.com/gardener-etcd/gardener-etcd/pkg/seedworkflow"
	"github.com/gardener-etcd/gardener-etcd/test/support/gardenletsecrets"
)

// The whole suite runs on a seed that enforces NetworkPolicies (kube-network-policies on every node) with the
// policies of a Gardener seed, written by Gardener's own controllers: deny-all in the garden and shoot
// namespaces, opened by the labels and annotations druid, the charts and the Gardener side write. These specs
// check the policies themselves, and run a shoot's CA rotation on a 3-member etcd-main under them, with the
// TLS secrets of gardenlet's secrets manager.
var _ = Describe("under Gardener's network policies", Ordered, func() {
	var (
		env    *seedworkflow.Env
		prober string
	)

	BeforeAll(func(ctx SpecContext) {
		var err error
		prober, err = base.Seed.PushImage(ctx, "../..", imagebuild.Binary{Name: "httpecho", Package: "./pkg/localseed/testdata/httpecho"})
		Expect(err).NotTo(HaveOccurred())
		env = newShoot(ctx, "netpol", fastDeltaSnapshots)
		measure("bootstrap 3 members with gardenlet's TLS secrets under Gardener's policies", func() {
			deployWithGardenletTLS(ctx, env, gardenletsecrets.CARotation{})
		})
	}, NodeTimeout(15*time.Minute))

	It("has Gardener's seed policies in the garden and the shoot namespace", func(ctx SpecContext) {
		for _, ns := range []string{seedworkflow.GardenNamespace, env.Namespace} {
			names := policyNames(ctx, env, ns)
			Expect(names).To(ContainElements("deny-all", "allow-to-dns", "allow-to-runtime-apiserver", "allow-to-private-networks"),
				"gardenlet's policies in %s", ns)
		}
		// gardener-resource-manager's policies from the client Service's annotations and the pods' labels.
		Expect(policyNames(ctx, env, env.Namespace)).To(ContainElements(
			"ingress-to-etcd-main-client-tcp-2379", "ingress-to-etcd-main-client-tcp-2380", "ingress-to-etcd-main-client-tcp-8080"))
	})

	It("refuses pods without the labels and admits one labelled for the client port", func(ctx SpecContext) {
		member := memberPod(ctx, env, etcd.Name(etcd.RoleMain)+"-0")
		client2379 := net.JoinHostPort(member.Status.PodIP, strconv.Itoa(int(etcdpod.DefaultClientPort)))
		backup8080 := net.JoinHostPort(member.Status.PodIP, strconv.Itoa(int(etcdpod.DefaultBackupPort)))
		strangerNS := "netpol-strangers"
		Expect(client.IgnoreAlreadyExists(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: strangerNS}}))).To(Succeed())
		DeferCleanup(func(ctx SpecContext) {
			Expect(client.IgnoreNotFound(env.Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: strangerNS}}))).To(Succeed())
		})
		stranger := startProber(ctx, env, env.Namespace, "stranger", prober, nil)
		outsider := startProber(ctx, env, strangerNS, "outsider", prober, nil)
		labelled := startProber(ctx, env, env.Namespace, "apiserver-like", prober,
			map[string]string{"networking.resources.gardener.cloud/to-etcd-main-client-tcp-2379": "allowed"})

		// The labelled pod reaches the client port, and only it: the policies are enforced, not just absent.
		Eventually(func() error { return dial(labelled, client2379) }).WithContext(ctx).WithTimeout(2 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		for _, target := range []string{client2379, backup8080} {
			for _, from := range []*corev1.Pod{stranger, outsider} {
				Expect(dial(from, target)).To(MatchError(ContainSubstring("timeout")), "%s/%s reached %s", from.Namespace, from.Name, target)
			}
		}
		Expect(dial(labelled, backup8080)).To(MatchError(ContainSubstring("timeout")), "the client-port label opened the backup port")
	})

	It("rotates the client and the peer CA through the secrets manager's phases under a writer, never below quorum", func(ctx SpecContext) {
		rotatedAt := time.Now().UTC().Truncate(time.Second)
		quorum := watchReadyMembers(ctx, env, etcd.RoleMain)
		w := seedworkflow.StartWriter(ctx, env, etcd.RoleMain, "/e2e/netpol-rotation/")
		measure("CA rotation, preparing (old and new CA trusted)", func() {
			deployWithGardenletTLS(ctx, env, gardenletsecrets.CARotation{LastInitiation: &rotatedAt})
		})
		measure("CA rotation, completing (the new CA only)", func() {
			deployWithGardenletTLS(ctx, env, gardenletsecrets.CARotation{LastInitiation: &rotatedAt, Completing: true})
		})
		acksAfter := w.AckedCount() + 20
		Eventually(w.AckedCount).WithContext(ctx).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(BeNumerically(">=", acksAfter))
		acked, failures, gap := w.Stop()
		fewest, samples := quorum.stop()
		present := expectKeysOnEveryMember(ctx, env, etcd.RoleMain, "/e2e/netpol-rotation/", 3, acked)
		AddReportEntry("CA rotation writes", fmt.Sprintf("%d acknowledged (none lost), %d present on every member, %d failed attempts, longest gap %s; fewest ready members %d in %d samples",
			len(acked), present, failures, gap, fewest, samples))
		Expect(fewest).To(BeNumerically(">=", 2), "a majority of the 3 members was ready throughout")

		obj := getEtcd(ctx, env, etcd.RoleMain)
		bundle := &corev1.Secret{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: env.Namespace, Name: obj.Spec.Etcd.ClientUrlTLS.TLSCASecretRef.Name}, bundle)).To(Succeed())
		Expect(strings.Count(string(bundle.Data["bundle.crt"]), "BEGIN CERTIFICATE")).To(Equal(1), "the client bundle holds only the new CA")
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: env.Namespace, Name: obj.Spec.Etcd.PeerUrlTLS.TLSCASecretRef.Name}, bundle)).To(Succeed())
		Expect(strings.Count(string(bundle.Data["bundle.crt"]), "BEGIN CERTIFICATE")).To(Equal(1), "the peer bundle holds only the new CA")
	})
})

// deployWithGardenletTLS is one gardenlet reconcile of the shoot's etcd-main with the project's component: the
// secrets manager in the CA rotation's phase as TLS source, 3 members, RolloutPeerCA while the rotation is
// prepared, then Deploy, Wait, the members rolled to the new spec, and the secrets manager's Cleanup.
func deployWithGardenletTLS(ctx context.Context, env *seedworkflow.Env, rotation gardenletsecrets.CARotation) {
	sm, err := gardenletsecrets.Manager(ctx, gardenerClient(), env.Namespace, rotation)
	Expect(err).NotTo(HaveOccurred())
	values := etcd.Values{Role: etcd.RoleMain, Replicas: ptr.To[int32](3), HighAvailability: true,
		BackupConfig: &etcd.BackupConfig{BackupEntryName: env.BackupEntryName}, DeltaSnapshotPeriod: env.DeltaSnapshotPeriod,
		TLS: gardenersecrets.New(sm), WaitTimeout: env.Timeout, WaitInterval: env.Interval}
	c := etcd.New(env.Client, env.Namespace, values)
	if rotation.LastInitiation != nil && !rotation.Completing {
		// gardenlet's order while a CA rotation is prepared: every member trusts the new peer CA before
		// Deploy brings peer certificates signed by it.
		Expect(c.RolloutPeerCA(ctx)).To(Succeed())
		waitRolledOut(ctx, env, etcd.RoleMain)
	}
	Expect(c.Deploy(ctx)).To(Succeed())
	Expect(c.Wait(ctx)).To(Succeed())
	waitRolledOut(ctx, env, etcd.RoleMain)
	Expect(seedworkflow.WaitMembers(ctx, env, etcd.RoleMain, 3, true)).To(Succeed())
	Expect(sm.Cleanup(ctx)).To(Succeed())
}

// waitRolledOut waits until every member's pod runs the StatefulSet's current template and is ready.
func waitRolledOut(ctx context.Context, env *seedworkflow.Env, role string) {
	Eventually(func(g Gomega) {
		sts := statefulSet(ctx, env, role)
		g.Expect(sts.Status.ObservedGeneration).To(Equal(sts.Generation))
		pods := &corev1.PodList{}
		g.Expect(env.Client.List(ctx, pods, client.InNamespace(env.Namespace), client.MatchingLabels(sts.Spec.Selector.MatchLabels))).To(Succeed())
		g.Expect(pods.Items).To(HaveLen(int(*sts.Spec.Replicas)))
		for _, p := range pods.Items {
			g.Expect(p.Labels).To(HaveKeyWithValue("controller-revision-hash", sts.Status.UpdateRevision), "pod %s", p.Name)
			g.Expect(podReady(&p)).To(BeTrue(), "pod %s", p.Name)
		}
	}).WithContext(ctx).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(Succeed())
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// readyMembersWatch samples how many of the role's pods are ready.
type readyMembersWatch struct {
	mu      sync.Mutex
	fewest  int
	samples int
	cancel  context.CancelFunc
	done    chan struct{}
}

func watchReadyMembers(ctx context.Context, env *seedworkflow.Env, role string) *readyMembersWatch {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r := &readyMembersWatch{fewest: -1, cancel: cancel, done: make(chan struct{})}
	sts := statefulSet(ctx, env, role)
	go func() {
		defer close(r.done)
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			pods := &corev1.PodList{}
			if err := env.Client.List(ctx, pods, client.InNamespace(env.Namespace), client.MatchingLabels(sts.Spec.Selector.MatchLabels)); err != nil {
				continue
			}
			ready := 0
			for i := range pods.Items {
				if podReady(&pods.Items[i]) && pods.Items[i].DeletionTimestamp == nil {
					ready++
				}
			}
			r.mu.Lock()
			if r.fewest < 0 || ready < r.fewest {
				r.fewest = ready
			}
			r.samples++
			r.mu.Unlock()
		}
	}()
	return r
}

func (r *readyMembersWatch) stop() (fewest, samples int) {
	r.cancel()
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fewest, r.samples
}

// policyNames lists the NetworkPolicies of a namespace once Gardener's controllers wrote them.
func policyNames(ctx context.Context, env *seedworkflow.Env, namespace string) []string {
	var names []string
	Eventually(func(g Gomega) {
		list := &networkingv1.NetworkPolicyList{}
		g.Expect(env.Client.List(ctx, list, client.InNamespace(namespace))).To(Succeed())
		names = names[:0]
		for _, p := range list.Items {
			names = append(names, p.Name)
		}
		g.Expect(names).To(ContainElement("deny-all"))
	}).WithContext(ctx).WithTimeout(time.Minute).WithPolling(pollInterval).Should(Succeed())
	return names
}

// statefulSet reads the role's StatefulSet.
func statefulSet(ctx context.Context, env *seedworkflow.Env, role string) *appsv1.StatefulSet {
	sts := &appsv1.StatefulSet{}
	Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: env.Namespace, Name: etcd.Name(role)}, sts)).To(Succeed())
	return sts
}

// proberLabel marks the prober pods, which the host asks over their port 8080 (allowProberRequests).
const proberLabel = "e2e.gardener-etcd/prober"

// startProber runs the prober image (httpecho) in namespace with labels and waits until it is ready; the
// host may ask it on port 8080, nothing else is opened for it.
func startProber(ctx context.Context, env *seedworkflow.Env, namespace, name, image string, labels map[string]string) *corev1.Pod {
	allowProberRequests(ctx, env, namespace)
	labels = maps.Clone(labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[proberLabel] = "true"
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels}, Spec: corev1.PodSpec{
		TerminationGracePeriodSeconds: ptr.To[int64](1),
		SecurityContext:               &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](65532)},
		Containers: []corev1.Container{{
			Name: "prober", Image: image, Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
			SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
				Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
			ReadinessProbe: &corev1.Probe{PeriodSeconds: 1,
				ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")}}},
		}},
	}}
	Expect(env.Client.Create(ctx, pod)).To(Succeed())
	DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(env.Client.Delete(ctx, pod))).To(Succeed()) })
	Eventually(func(g Gomega) {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
		g.Expect(podReady(pod)).To(BeTrue())
	}).WithContext(ctx).WithTimeout(2 * time.Minute).WithPolling(pollInterval).Should(Succeed())
	return pod
}

// dial has the prober pod open a TCP connection to addr; nil when it connected.
func dial(from *corev1.Pod, addr string) error {
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get("http://" + net.JoinHostPort(from.Status.PodIP, "8080") + "/dial?addr=" + addr)
	Expect(err).NotTo(HaveOccurred(), "the host reaches the prober %s/%s", from.Namespace, from.Name)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s/%s → %s: %s", from.Namespace, from.Name, addr, strings.TrimSpace(string(body)))
	}
	return nil
}

// allowProberRequests lets the host reach the probers' port 8080 in namespace.
func allowProberRequests(ctx context.Context, env *seedworkflow.Env, namespace string) {
	allowFromSeedHost(ctx, env, namespace, "allow-from-seed-host-to-probers", map[string]string{proberLabel: "true"}, 8080)
}

// allowFromSeedHost lets the host, where the suite's checks run in place of the seed's Prometheus and other
// in-cluster clients, reach port of the pods with labels in namespace (Gardener's seed policies deny it).
func allowFromSeedHost(ctx context.Context, env *seedworkflow.Env, namespace, name string, labels map[string]string, port int32) {
	policy := &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: labels},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{
				From:  []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: env.Seed.BridgeIP() + "/32"}}},
				Ports: []networkingv1.NetworkPolicyPort{{Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(intstr.FromInt32(port))}},
			}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
		},
	}
	Expect(client.IgnoreAlreadyExists(env.Client.Create(ctx, policy))).To(Succeed())
}
