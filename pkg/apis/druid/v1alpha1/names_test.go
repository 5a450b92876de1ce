package v1alpha1_test

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

func TestObjectNamesMatchTheReference(t *testing.T) {
	g := NewWithT(t)
	etcd := minimalEtcd()
	etcd.Spec.Replicas = 3

	g.Expect(druidv1alpha1.StatefulSetName(etcd)).To(Equal("etcd-main"))
	g.Expect(druidv1alpha1.ServiceAccountName(etcd)).To(Equal("etcd-main"))
	g.Expect(druidv1alpha1.RoleName(etcd)).To(Equal("druid.gardener.cloud:etcd:etcd-main"))
	g.Expect(druidv1alpha1.ClientServiceName(etcd)).To(Equal("etcd-main-client"))
	g.Expect(druidv1alpha1.PeerServiceName(etcd)).To(Equal("etcd-main-peer"))
	g.Expect(druidv1alpha1.ConfigMapName(etcd)).To(Equal("etcd-main-config"))
	g.Expect(druidv1alpha1.PDBName(etcd)).To(Equal("etcd-main"))
	g.Expect(druidv1alpha1.FullSnapshotLeaseName(etcd)).To(Equal("etcd-main-full-snap"))
	g.Expect(druidv1alpha1.DeltaSnapshotLeaseName(etcd)).To(Equal("etcd-main-delta-snap"))
	g.Expect(druidv1alpha1.CompactionJobName(etcd)).To(Equal("etcd-main-compactor"))
	g.Expect(druidv1alpha1.VolumeClaimTemplateName(etcd)).To(Equal("etcd-main"))
	g.Expect(druidv1alpha1.MemberLeaseNames(etcd)).To(Equal([]string{"etcd-main-0", "etcd-main-1", "etcd-main-2"}))

	etcd.Spec.VolumeClaimTemplate = ptr.To("main-etcd")
	g.Expect(druidv1alpha1.VolumeClaimTemplateName(etcd)).To(Equal("main-etcd"))
}

func TestMemberNamePrefix(t *testing.T) {
	g := NewWithT(t)
	etcd := minimalEtcd()
	etcd.Spec.MemberNamePrefix = ptr.To("garden")
	g.Expect(druidv1alpha1.MemberLeaseName(etcd, 2)).To(Equal("garden-etcd-main-2"))
	g.Expect(druidv1alpha1.PodName(etcd, 2)).To(Equal("etcd-main-2"))

	ordinal, ok := druidv1alpha1.OrdinalOf(etcd, "garden-etcd-main-2")
	g.Expect(ok).To(BeTrue())
	g.Expect(ordinal).To(Equal(2))
	_, ok = druidv1alpha1.OrdinalOf(etcd, "etcd-main-2")
	g.Expect(ok).To(BeFalse(), "a lease without the prefix is not a member of a prefixed Etcd")
}

func TestOrdinalOf(t *testing.T) {
	etcd := minimalEtcd()
	for name, want := range map[string]int{"etcd-main-0": 0, "etcd-main-12": 12} {
		got, ok := druidv1alpha1.OrdinalOf(etcd, name)
		if !ok || got != want {
			t.Errorf("OrdinalOf(%q) = %d, %v; want %d, true", name, got, ok, want)
		}
	}
	for _, name := range []string{"etcd-main", "etcd-main-", "etcd-main-01", "etcd-main--1", "etcd-main-x", "etcd-events-0", "etcd-main-full-snap"} {
		if got, ok := druidv1alpha1.OrdinalOf(etcd, name); ok {
			t.Errorf("OrdinalOf(%q) = %d, true; want false", name, got)
		}
	}
}

func TestComponentLabels(t *testing.T) {
	g := NewWithT(t)
	etcd := minimalEtcd()
	g.Expect(druidv1alpha1.ComponentLabels(etcd, druidv1alpha1.ComponentClientService, "etcd-main-client")).To(Equal(map[string]string{
		"app.kubernetes.io/managed-by": "etcd-druid",
		"app.kubernetes.io/part-of":    "etcd-main",
		"app.kubernetes.io/component":  "etcd-client-service",
		"app.kubernetes.io/name":       "etcd-main-client",
	}))
	// ManagedLabels is the StatefulSet selector: it must not pick up the per-object labels.
	g.Expect(druidv1alpha1.ManagedLabels(etcd)).To(HaveLen(2))
}
