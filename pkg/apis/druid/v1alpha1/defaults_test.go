package v1alpha1_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

func minimalEtcd() *druidv1alpha1.Etcd {
	return &druidv1alpha1.Etcd{
		ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: "shoot--dev--a"},
		Spec: druidv1alpha1.EtcdSpec{
			Labels:   map[string]string{"role": "main"},
			Replicas: 1,
		},
	}
}

func TestSetDefaultsFillsEveryDocumentedDefault(t *testing.T) {
	g := NewWithT(t)
	etcd := minimalEtcd()
	etcd.Spec.Etcd.ClientUrlTLS = &druidv1alpha1.TLSConfig{}
	etcd.Spec.Etcd.PeerUrlTLS = &druidv1alpha1.PeerTLSConfig{}
	etcd.Spec.Backup.TLS = &druidv1alpha1.TLSConfig{}

	druidv1alpha1.SetDefaults(etcd)

	s := etcd.Spec
	g.Expect(s.StorageCapacity.Cmp(resource.MustParse("16Gi"))).To(Equal(0))
	g.Expect(s.VolumeClaimTemplate).To(Equal(ptr.To("etcd-main")))
	g.Expect(s.RunAsRoot).To(Equal(ptr.To(false)))
	g.Expect(s.Etcd.Quota.Cmp(resource.MustParse("8Gi"))).To(Equal(0))
	g.Expect(s.Etcd.SnapshotCount).To(Equal(ptr.To(int64(10000))))
	g.Expect(s.Etcd.ServerPort).To(Equal(ptr.To(int32(2380))))
	g.Expect(s.Etcd.ClientPort).To(Equal(ptr.To(int32(2379))))
	g.Expect(s.Etcd.WrapperPort).To(Equal(ptr.To(int32(9095))))
	g.Expect(s.Etcd.Metrics).To(Equal(ptr.To(druidv1alpha1.Basic)))
	g.Expect(s.Etcd.EtcdDefragTimeout.Duration).To(Equal(15 * time.Minute))
	g.Expect(s.Etcd.HeartbeatDuration.Duration).To(Equal(10 * time.Second))
	g.Expect(s.Etcd.ClientUrlTLS.TLSCASecretRef.DataKey).To(Equal(ptr.To("ca.crt")))
	g.Expect(s.Etcd.PeerUrlTLS.TLSCASecretRef.DataKey).To(Equal(ptr.To("ca.crt")))
	g.Expect(s.Backup.TLS.TLSCASecretRef.DataKey).To(Equal(ptr.To("ca.crt")))
	g.Expect(s.Backup.Port).To(Equal(ptr.To(int32(8080))))
	g.Expect(s.Backup.GarbageCollectionPolicy).To(Equal(ptr.To(druidv1alpha1.GarbageCollectionPolicyLimitBased)))
	g.Expect(s.Backup.MaxBackupsLimitBasedGC).To(Equal(ptr.To(int32(7))))
	for _, r := range []*corev1.ResourceRequirements{s.Etcd.Resources, s.Backup.Resources} {
		g.Expect(r.Requests.Cpu().Cmp(resource.MustParse("50m"))).To(Equal(0))
		g.Expect(r.Requests.Memory().Cmp(resource.MustParse("128Mi"))).To(Equal(0))
		g.Expect(r.Limits).To(BeEmpty())
	}
	g.Expect(s.Backup.DeltaSnapshotMemoryLimit.Cmp(resource.MustParse("100Mi"))).To(Equal(0))
	g.Expect(s.Backup.EtcdSnapshotTimeout.Duration).To(Equal(15 * time.Minute))
	g.Expect(s.Common.AutoCompactionMode).To(Equal(ptr.To(druidv1alpha1.Periodic)))
	g.Expect(s.Common.AutoCompactionRetention).To(Equal(ptr.To("30m")))
}

func TestSetDefaultsKeepsValuesThatAreSet(t *testing.T) {
	g := NewWithT(t)
	etcd := minimalEtcd()
	capacity := resource.MustParse("25Gi")
	etcd.Spec.StorageCapacity = &capacity
	etcd.Spec.VolumeClaimTemplate = ptr.To("main-etcd")
	etcd.Spec.RunAsRoot = ptr.To(true)
	etcd.Spec.Etcd.ClientPort = ptr.To(int32(12379))
	etcd.Spec.Etcd.ClientUrlTLS = &druidv1alpha1.TLSConfig{TLSCASecretRef: druidv1alpha1.SecretReference{DataKey: ptr.To("bundle.crt")}}
	etcd.Spec.Backup.Port = ptr.To(int32(18080))
	etcd.Spec.Common = druidv1alpha1.SharedConfig{AutoCompactionMode: ptr.To(druidv1alpha1.Revision)}
	etcd.Spec.Backup.GarbageCollectionPolicy = ptr.To(druidv1alpha1.GarbageCollectionPolicyExponential)
	etcd.Spec.Etcd.Resources = &corev1.ResourceRequirements{}
	etcd.Spec.Backup.Resources = &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}
	before := etcd.DeepCopy()

	druidv1alpha1.SetDefaults(etcd)

	g.Expect(etcd.Spec.StorageCapacity.Cmp(capacity)).To(Equal(0))
	g.Expect(etcd.Spec.VolumeClaimTemplate).To(Equal(before.Spec.VolumeClaimTemplate))
	g.Expect(etcd.Spec.RunAsRoot).To(Equal(ptr.To(true)))
	g.Expect(etcd.Spec.Etcd.ClientPort).To(Equal(ptr.To(int32(12379))))
	g.Expect(etcd.Spec.Etcd.ClientUrlTLS.TLSCASecretRef.DataKey).To(Equal(ptr.To("bundle.crt")))
	g.Expect(etcd.Spec.Backup.Port).To(Equal(ptr.To(int32(18080))))
	g.Expect(etcd.Spec.Common.AutoCompactionMode).To(Equal(ptr.To(druidv1alpha1.Revision)))
	g.Expect(etcd.Spec.Common.AutoCompactionRetention).To(Equal(ptr.To("30m")))
	g.Expect(etcd.Spec.Backup.GarbageCollectionPolicy).To(Equal(ptr.To(druidv1alpha1.GarbageCollectionPolicyExponential)))
	g.Expect(etcd.Spec.Etcd.Resources).To(Equal(before.Spec.Etcd.Resources))
	g.Expect(etcd.Spec.Backup.Resources).To(Equal(before.Spec.Backup.Resources))
}

func TestSetDefaultsLeavesOptionalBlocksAbsent(t *testing.T) {
	g := NewWithT(t)
	etcd := minimalEtcd()
	druidv1alpha1.SetDefaults(etcd)
	// TLS and the store are switches: defaulting must not turn them on.
	g.Expect(etcd.Spec.Etcd.ClientUrlTLS).To(BeNil())
	g.Expect(etcd.Spec.Etcd.PeerUrlTLS).To(BeNil())
	g.Expect(etcd.Spec.Backup.TLS).To(BeNil())
	g.Expect(etcd.Spec.Backup.Store).To(BeNil())
}

func TestSetDefaultsIsIdempotent(t *testing.T) {
	g := NewWithT(t)
	once := minimalEtcd()
	druidv1alpha1.SetDefaults(once)
	twice := once.DeepCopy()
	druidv1alpha1.SetDefaults(twice)
	g.Expect(twice).To(Equal(once))
}
