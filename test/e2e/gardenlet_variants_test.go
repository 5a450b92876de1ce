//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	druidcorev1alpha1 "github.com/gardener/etcd-druid/api/core/v1alpha1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	gardenerkubernetes "github.com/gardener/gardener/pkg/client/kubernetes"
	gardeneretcd "github.com/gardener/gardener/pkg/component/etcd/etcd"
	etcdconstants "github.com/gardener/gardener/pkg/component/etcd/etcd/constants"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupsecret"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
	"github.com/gardener-etcd/gardener-etcd/pkg/seedworkflow"
	"github.com/gardener-etcd/gardener-etcd/test/support/minioserver"
	"github.com/gardener-etcd/gardener-etcd/test/support/oidcissuer"
)

// Variants of the Etcds gardenlet writes, with Gardener's own etcd component and secrets manager under
// gardenlet's deployment of druid (as in gardenlet_test.go), in one shoot namespace: etcd-events on the
// wrapper port Gardener gives etcd-events (9096), and etcd-main backed up with workload-identity
// credentials exchanged at a real STS.
var _ = Describe("under gardenlet's deployment, Gardener's variants", Ordered, func() {
	var (
		env   *seedworkflow.Env
		shoot *gardenletShoot
	)

	BeforeAll(func(ctx SpecContext) {
		var gardenlet *gardenletDruid
		measure("deploy druid from gardenlet's objects", func() { gardenlet = deployDruidAsGardenlet(ctx) })
		DeferCleanup(func(ctx SpecContext) { gardenlet.restore(ctx) }, NodeTimeout(10*time.Minute))
		env = newShoot(ctx, "gardenlet-variants", 0)
		shoot = newGardenletShoot(ctx, env)
	}, NodeTimeout(15*time.Minute))

	It("brings etcd-events up Ready on wrapper port 9096 with 3 members and a full snapshot in the store", func(ctx SpecContext) {
		// Gardener's component gives etcd-events the port 9096 only as a static pod (which needs control-plane
		// node addresses and runs no StatefulSet); it writes through a client that sets that port on the way.
		c := shoot.componentWith(wrapperPortWriter(wrapperPortEtcdEvents), gardeneretcd.Values{
			Role:     v1beta1constants.ETCDRoleEvents,
			Class:    gardeneretcd.ClassNormal,
			Replicas: ptr.To(int32(3)),
			// The botanist's size for etcd-events.
			StorageCapacity:         "10Gi",
			HighAvailabilityEnabled: true,
			// The botanist backs up etcd-main only; the component takes a backup for any role, and the store
			// is what shows the sidecar found the wrapper.
			BackupConfig: shoot.backup,
		})
		DeferCleanup(func(ctx SpecContext) { destroyGardenerEtcd(ctx, env, c, etcd.RoleEvents) }, NodeTimeout(8*time.Minute))
		measure("gardenlet's etcd-events (3 members, wrapper port 9096) to Ready", func() {
			Expect(c.Deploy(ctx)).To(Succeed())
			Expect(c.Wait(ctx)).To(Succeed())
			Expect(seedworkflow.WaitMembers(ctx, env, etcd.RoleEvents, 3, true)).To(Succeed())
			expectCondition(ctx, env, etcd.RoleEvents, druidv1alpha1.ConditionTypeReady, druidv1alpha1.ConditionTrue, "")
		})
		obj := getEtcd(ctx, env, etcd.RoleEvents)
		Expect(obj.Spec.Etcd.WrapperPort).To(Equal(ptr.To(wrapperPortEtcdEvents)))
		By("every member pod runs the wrapper on 9096: its port, its probes and both containers' flag")
		for ordinal := range 3 {
			expectWrapperPort(ctx, env, druidv1alpha1.PodName(obj, ordinal), wrapperPortEtcdEvents)
		}
		expectCondition(ctx, env, etcd.RoleEvents, druidv1alpha1.ConditionTypeBackupReady, druidv1alpha1.ConditionTrue, "")
		Eventually(func() []string { return shoot.fullSnapshotsOf(ctx, etcd.RoleEvents) }).WithContext(ctx).WithTimeout(waitTimeout).
			WithPolling(pollInterval).ShouldNot(BeEmpty(), "a full snapshot under %s", shoot.storePrefixOf(etcd.RoleEvents))
		fmt.Fprintf(GinkgoWriter, "full snapshots: %v\n", shoot.fullSnapshotsOf(ctx, etcd.RoleEvents))
	})

	It("brings etcd-main up Ready with workload-identity backup credentials exchanged at MinIO's STS", func(ctx SpecContext) {
		store := startWorkloadIdentityStore(ctx)
		secret := store.secret(env)
		Expect(env.Client.Create(ctx, secret)).To(Succeed())
		backup := *shoot.backup
		backup.SecretRefName, backup.Container = secret.Name, store.bucket
		c := shoot.componentWith(shoot.c, gardeneretcd.Values{
			Role:            v1beta1constants.ETCDRoleMain,
			Class:           gardeneretcd.ClassImportant,
			Replicas:        ptr.To(int32(1)),
			StorageCapacity: "25Gi",
			BackupConfig:    &backup,
		})
		DeferCleanup(func(ctx SpecContext) { destroyGardenerEtcd(ctx, env, c, etcd.RoleMain) }, NodeTimeout(8*time.Minute))
		measure("gardenlet's etcd-main with workload identity to Ready", func() {
			Expect(c.Deploy(ctx)).To(Succeed())
			Expect(c.Wait(ctx)).To(Succeed())
			Expect(seedworkflow.WaitMembers(ctx, env, etcd.RoleMain, 1, false)).To(Succeed())
			expectCondition(ctx, env, etcd.RoleMain, druidv1alpha1.ConditionTypeReady, druidv1alpha1.ConditionTrue, "")
		})
		obj := getEtcd(ctx, env, etcd.RoleMain)
		Expect(obj.Spec.Backup.Store.SecretRef.Name).To(Equal(secret.Name))
		stored := &corev1.Secret{}
		Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(secret), stored)).To(Succeed())
		Expect(stored.Data).To(HaveKey(backupsecret.KeyRoleARN))
		Expect(stored.Data).To(HaveKey(backupsecret.KeyToken))
		Expect(stored.Data).NotTo(HaveKey(backupsecret.KeyAccessKeyID), "the secret carries no access keys")
		Expect(stored.Data).NotTo(HaveKey(backupsecret.KeySecretAccessKey), "the secret carries no access keys")
		expectCondition(ctx, env, etcd.RoleMain, druidv1alpha1.ConditionTypeBackupReady, druidv1alpha1.ConditionTrue, "")
		prefix := shoot.storePrefixOf(etcd.RoleMain)
		Eventually(func() []string { return store.fullSnapshots(ctx, prefix) }).WithContext(ctx).WithTimeout(waitTimeout).
			WithPolling(pollInterval).ShouldNot(BeEmpty(), "a full snapshot under %s in MinIO's bucket %s", prefix, store.bucket)
		fmt.Fprintf(GinkgoWriter, "full snapshots in MinIO: %v\n", store.fullSnapshots(ctx, prefix))
	})
})

// wrapperPortEtcdEvents is the wrapper port Gardener gives etcd-events (etcdconstants' static pod port).
var wrapperPortEtcdEvents = etcdconstants.StaticPodPortEtcdEventsWrapper

// wrapperPortWriter is a client of the seed with Gardener's seed scheme that sets spec.etcd.wrapperPort to
// port on every Etcd it creates or patches.
func wrapperPortWriter(port int32) client.Client {
	c, err := client.NewWithWatch(seed.RESTConfig(), client.Options{Scheme: gardenerkubernetes.SeedScheme})
	Expect(err).NotTo(HaveOccurred())
	set := func(obj client.Object) {
		if e, ok := obj.(*druidcorev1alpha1.Etcd); ok {
			e.Spec.Etcd.WrapperPort = ptr.To(port)
		}
	}
	return interceptor.NewClient(c, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			set(obj)
			return c.Create(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			set(obj)
			return c.Patch(ctx, obj, patch, opts...)
		},
	})
}

// expectWrapperPort checks that the pod runs the wrapper on port: the etcd container's port named wrapper,
// every probe of the pod that asks the wrapper, and --etcd-wrapper-port in both containers' arguments.
func expectWrapperPort(ctx context.Context, env *seedworkflow.Env, podName string, port int32) {
	pod := &corev1.Pod{}
	Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: env.Namespace, Name: podName}, pod)).To(Succeed())
	containers := map[string]corev1.Container{}
	for _, c := range pod.Spec.Containers {
		containers[c.Name] = c
	}
	Expect(containers).To(HaveKey(etcdpod.ContainerEtcd))
	Expect(containers).To(HaveKey(etcdpod.ContainerBackupRestore))
	wrapper := containers[etcdpod.ContainerEtcd]
	Expect(wrapper.Ports).To(ContainElement(And(HaveField("Name", etcdpod.PortNameWrapper), HaveField("ContainerPort", port))), "pod %s", podName)
	// With more than one member both probes ask the wrapper (readiness /readyz, liveness /phase).
	for name, probe := range map[string]*corev1.Probe{"readiness": wrapper.ReadinessProbe, "liveness": wrapper.LivenessProbe} {
		Expect(probe).NotTo(BeNil(), "%s probe of pod %s", name, podName)
		Expect(probe.HTTPGet).NotTo(BeNil(), "%s probe of pod %s", name, podName)
		Expect(probe.HTTPGet.Port).To(Equal(intstr.FromInt32(port)), "%s probe of pod %s", name, podName)
	}
	flag := podwire.Arg(podwire.FlagEtcdWrapperPort, strconv.Itoa(int(port)))
	for _, name := range []string{etcdpod.ContainerEtcd, etcdpod.ContainerBackupRestore} {
		Expect(containers[name].Args).To(ContainElement(flag), "arguments of container %s of pod %s", name, podName)
	}
	Expect(pod.Status.ContainerStatuses).To(HaveEach(HaveField("Ready", BeTrue())), "containers of pod %s", podName)
}

// minioClientID is the audience of the shoot's tokens and the OpenID client MinIO grants the role to.
const minioClientID = "etcd-backup"

// workloadIdentityStore is an S3 server with a real STS, reachable from the seed's pods: MinIO on the pod
// bridge, trusting an OpenID issuer (also on the bridge) for AssumeRoleWithWebIdentity, with the bucket
// created with MinIO's root credentials.
type workloadIdentityStore struct {
	minio  *minioserver.Server
	issuer *oidcissuer.Issuer
	root   *s3.Client
	bucket string
	region string
}

func startWorkloadIdentityStore(ctx context.Context) *workloadIdentityStore {
	s := &workloadIdentityStore{bucket: "gardenlet-workload-identity", region: "us-east-1"}
	var err error
	s.issuer, err = oidcissuer.Listen(seed.BridgeIP())
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(s.issuer.Close()).To(Succeed()) })
	s.minio, err = minioserver.StartProcess(minioserver.Config{Region: s.region, Host: seed.BridgeIP(),
		OpenID: &minioserver.OpenID{ConfigURL: s.issuer.ConfigURL(), ClientID: minioClientID, RolePolicy: "readwrite"}})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(s.minio.Stop()).To(Succeed()) })
	fmt.Fprintf(GinkgoWriter, "MinIO with STS at %s, OpenID issuer %s\n", s.minio.Endpoint, s.issuer.URL)
	s.root = s3.New(s3.Options{BaseEndpoint: aws.String(s.minio.Endpoint), Region: s.region, UsePathStyle: true,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: minioserver.RootUser, SecretAccessKey: minioserver.RootPassword}, nil
		})})
	_, err = s.root.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(s.bucket)})
	Expect(err).NotTo(HaveOccurred())
	return s
}

// secret is the shoot's backup secret with a workload identity as Gardener's AWS extension writes it
// (region, roleARN, token), plus the endpoint keys of a server other than AWS; no access keys. The token
// is the service account token the shoot's token requestor would put there, signed by the issuer.
func (s *workloadIdentityStore) secret(env *seedworkflow.Env) *corev1.Secret {
	token, err := s.issuer.Token(s.issuer.Key, "system:serviceaccount:"+env.Namespace+":"+etcd.Name(etcd.RoleMain), minioClientID, 2*time.Hour)
	Expect(err).NotTo(HaveOccurred())
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "etcd-backup-workload-identity", Namespace: env.Namespace},
		Data: map[string][]byte{
			backupsecret.KeyRegion:                   []byte(s.region),
			backupsecret.KeyRoleARN:                  []byte(s.minio.RoleARN),
			backupsecret.KeyToken:                    []byte(token),
			backupsecret.KeyEndpoint:                 []byte(s.minio.Endpoint),
			backupsecret.KeyS3ForcePathStyle:         []byte("true"),
			v1beta1constants.DataKeyBackupBucketName: []byte(s.bucket),
		}}
}

// fullSnapshots are the keys of the full snapshots under prefix in the bucket, read with MinIO's root
// credentials.
func (s *workloadIdentityStore) fullSnapshots(ctx context.Context, prefix string) []string {
	var keys []string
	p := s3.NewListObjectsV2Paginator(s.root, &s3.ListObjectsV2Input{Bucket: aws.String(s.bucket), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		Expect(err).NotTo(HaveOccurred())
		for _, o := range page.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
	}
	return fullSnapshotKeys(keys, prefix)
}
