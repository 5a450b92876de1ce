package etcd_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/statefulset"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
)

// gardenletsEtcdMain is etcd-main as gardenlet's etcd component writes it for a single-member shoot with
// backup (class important), with the secret names of Gardener's own tests, which are this project's static
// names. Fields as Gardener's tests expect them; the store is the one of the shoot's BackupEntry, with the
// provider string as gardenlet copies it from the seed.
func gardenletsEtcdMain(namespace, entry, bucket string) *druidv1alpha1.Etcd {
	tls := func() *druidv1alpha1.TLSConfig {
		return &druidv1alpha1.TLSConfig{
			TLSCASecretRef:     druidv1alpha1.SecretReference{SecretReference: corev1.SecretReference{Name: "ca-etcd", Namespace: namespace}, DataKey: ptr.To("bundle.crt")},
			ServerTLSSecretRef: corev1.SecretReference{Name: "etcd-server-main", Namespace: namespace},
			ClientTLSSecretRef: corev1.SecretReference{Name: "etcd-client", Namespace: namespace},
		}
	}
	requestsOf := func(cpu, memory string) *corev1.ResourceRequirements {
		return &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}}
	}
	return &druidv1alpha1.Etcd{
		ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: namespace,
			Labels:      map[string]string{"gardener.cloud/role": "controlplane", "role": "main"},
			Annotations: map[string]string{"gardener.cloud/operation": "reconcile", "gardener.cloud/timestamp": "2026-03-01T10:00:00.123456789Z"},
		},
		Spec: druidv1alpha1.EtcdSpec{
			Replicas:          1,
			PriorityClassName: ptr.To("gardener-system-500"),
			Labels: map[string]string{
				"gardener.cloud/role": "controlplane", "role": "main", "app": "etcd-statefulset",
				"networking.gardener.cloud/to-dns":               "allowed",
				"networking.gardener.cloud/to-public-networks":   "allowed",
				"networking.gardener.cloud/to-private-networks":  "allowed",
				"networking.gardener.cloud/to-runtime-apiserver": "allowed",
			},
			Annotations: map[string]string{"cluster-autoscaler.kubernetes.io/safe-to-evict": "false"},
			Selector:    &metav1.LabelSelector{MatchLabels: map[string]string{"gardener.cloud/role": "controlplane", "role": "main", "app": "etcd-statefulset"}},
			Etcd: druidv1alpha1.EtcdConfig{
				Resources:               requestsOf("150m", "500M"),
				ClientUrlTLS:            tls(),
				ServerPort:              ptr.To[int32](2380),
				ClientPort:              ptr.To[int32](2379),
				WrapperPort:             ptr.To[int32](9095),
				Metrics:                 ptr.To(druidv1alpha1.Extensive),
				DefragmentationSchedule: ptr.To("34 22 * * *"),
				Quota:                   ptr.To(resource.MustParse("8Gi")),
				ClientService: &druidv1alpha1.ClientService{Annotations: map[string]string{
					"networking.resources.gardener.cloud/from-all-scrape-targets-allowed-ports": `[{"protocol":"TCP","port":2379},{"protocol":"TCP","port":8080}]`,
					"networking.resources.gardener.cloud/namespace-selectors":                   `[{"matchLabels":{"kubernetes.io/metadata.name":"garden"}}]`,
					"networking.resources.gardener.cloud/pod-label-selector-namespace-alias":    "all-shoots",
				}},
			},
			Backup: druidv1alpha1.BackupSpec{
				TLS:                     tls(),
				Port:                    ptr.To[int32](8080),
				Resources:               requestsOf("20m", "80Mi"),
				SnapshotCompaction:      &druidv1alpha1.SnapshotCompactionSpec{Resources: requestsOf("600m", "3Gi")},
				GarbageCollectionPolicy: ptr.To(druidv1alpha1.GarbageCollectionPolicyExponential),
				GarbageCollectionPeriod: &metav1.Duration{Duration: 12 * time.Hour},
				SnapshotCompression:     &druidv1alpha1.CompressionSpec{Enabled: ptr.To(true), Policy: ptr.To(druidv1alpha1.GzipCompression)},
				Store: &druidv1alpha1.StoreSpec{
					SecretRef: &corev1.SecretReference{Name: "etcd-backup"},
					Container: ptr.To(bucket),
					Provider:  ptr.To(druidv1alpha1.StorageProvider("local")),
					Prefix:    entry + "/etcd-main",
				},
				FullSnapshotSchedule:         ptr.To("5 22 * * *"),
				DeltaSnapshotPeriod:          &metav1.Duration{Duration: 5 * time.Minute},
				DeltaSnapshotRetentionPeriod: &metav1.Duration{Duration: 15 * 24 * time.Hour},
				DeltaSnapshotMemoryLimit:     ptr.To(resource.MustParse("100Mi")),
			},
			StorageCapacity:     ptr.To(resource.MustParse("25Gi")),
			VolumeClaimTemplate: ptr.To("main-etcd"),
		},
	}
}

// podTemplateChecksum is the checksum druid records for the pod template it renders from etcd: a change
// of it is a rolling update of every member.
func podTemplateChecksum(g Gomega, etcd *druidv1alpha1.Etcd) string {
	target := etcd.DeepCopy()
	druidv1alpha1.SetDefaults(target)
	images := config.Images{EtcdWrapper: "example.org/etcd-wrapper:v1", BackupRestore: "example.org/etcdbrctl:v1"}
	rendered, err := statefulset.Render(context.Background(), env.Client, images, config.LocalBackup{AllowedHostPaths: []string{localRoot}}, target)
	g.Expect(err).NotTo(HaveOccurred())
	return rendered.Checksum
}

// Switching a shoot from gardenlet's etcd component to this one: the first Deploy with the values gardenlet
// used (the botanist's schedules, 15 days of delta retention, one member) renders the same pod template,
// so druid rolls no member. What it does change is listed, each without an effect on the pods.
func TestDeployOverAnEtcdGardenletWroteRollsNoMember(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	s := newShoot(t)
	_, err := etcd.NewTLSSecrets(env.Client, s.namespace, etcd.TLSValues{Role: etcd.RoleMain}).Ensure(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func(g Gomega) {
		g.Expect(getEntry(g, s.entry).Status.EtcdBackupSecretRef).NotTo(BeNil())
	}, timeout, interval).Should(Succeed())
	gardenlets := gardenletsEtcdMain(s.namespace, s.entry, s.bucket)
	g.Expect(env.Client.Create(ctx, gardenlets)).To(Succeed())
	g.Expect(reconcileAsDruid(ctx, clientKey(gardenlets))).To(Succeed())
	before := getEtcd(g, s.namespace, "etcd-main")

	v := s.mainValues()
	v.Replicas = ptr.To[int32](1)
	v.DefragmentationSchedule = ptr.To("0 23 * * *") // the botanist's schedule of the day: the existing one stays
	v.DeltaSnapshotRetentionPeriod = 15 * 24 * time.Hour
	g.Expect(etcd.New(env.Client, s.namespace, v).Deploy(ctx)).To(Succeed())
	after := getEtcd(g, s.namespace, "etcd-main")

	g.Expect(podTemplateChecksum(g, after)).To(Equal(podTemplateChecksum(g, before)), "the first Deploy must not roll the members")

	// Everything else of the spec is as gardenlet left it, except what does not reach the pods:
	// the store's provider is the canonical name of the same provider, its secret reference names the
	// namespace, and druid's compaction defaults are written out.
	g.Expect(*after.Spec.Backup.Store.Provider).To(Equal(druidv1alpha1.StorageProviderLocal))
	g.Expect(after.Spec.Backup.Store.SecretRef).To(Equal(&corev1.SecretReference{Name: "etcd-backup", Namespace: s.namespace}))
	g.Expect(after.Spec.Common.AutoCompactionMode).To(HaveValue(Equal(druidv1alpha1.Periodic)))
	normalised := after.Spec.DeepCopy()
	normalised.Backup.Store.Provider, normalised.Backup.Store.SecretRef = before.Spec.Backup.Store.Provider, before.Spec.Backup.Store.SecretRef
	normalised.Common = before.Spec.Common
	g.Expect(*normalised).To(Equal(before.Spec))
}
