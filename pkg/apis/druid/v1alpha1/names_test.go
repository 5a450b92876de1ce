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

	g.Expect(etcd.StatefulSetName()).To(Equal("etcd-main"))
	g.Expect(etcd.ServiceAccountName()).To(Equal("etcd-main"))
	g.Expect(etcd.RoleName()).To(Equal("druid.gardener.cloud:etcd:etcd-main"))
	g.Expect(etcd.ClientServiceName()).To(Equal("etcd-main-client"))
	g.Expect(etcd.PeerServiceName()).To(Equal("etcd-main-peer"))
	g.Expect(etcd.ConfigMapName()).To(Equal("etcd-main-config"))
	g.Expect(etcd.PDBName()).To(Equal("etcd-main"))
	g.Expect(etcd.FullSnapshotLeaseName()).To(Equal("etcd-main-full-snap"))
	g.Expect(etcd.DeltaSnapshotLeaseName()).To(Equal("etcd-main-delta-snap"))
	g.Expect(etcd.CompactionJobName()).To(Equal("etcd-main-compactor"))
	g.Expect(etcd.VolumeClaimTemplateName()).To(Equal("etcd-main"))
	g.Expect(etcd.MemberLeaseNames()).To(Equal([]string{"etcd-main-0", "etcd-main-1", "etcd-main-2"}))

	etcd.Spec.VolumeClaimTemplate = ptr.To("main-etcd")
	g.Expect(etcd.VolumeClaimTemplateName()).To(Equal("main-etcd"))
}

func TestMemberNamePrefix(t *testing.T) {
	g := NewWithT(t)
	etcd := minimalEtcd()
	etcd.Spec.MemberNamePrefix = ptr.To("garden")
	g.Expect(etcd.MemberLeaseName(2)).To(Equal("garden-etcd-main-2"))
	g.Expect(etcd.PodName(2)).To(Equal("etcd-main-2"))

	ordinal, ok := etcd.OrdinalOf("garden-etcd-main-2")
	g.Expect(ok).To(BeTrue())
	g.Expect(ordinal).To(Equal(2))
	_, ok = etcd.OrdinalOf("etcd-main-2")
	g.Expect(ok).To(BeFalse(), "a lease without the prefix is not a member of a prefixed Etcd")
}

func TestOrdinalOf(t *testing.T) {
	etcd := minimalEtcd()
	for name, want := range map[string]int{"etcd-main-0": 0, "etcd-main-12": 12} {
		got, ok := etcd.OrdinalOf(name)
		if !ok || got != want {
			t.Errorf("OrdinalOf(%q) = %d, %v; want %d, true", name, got, ok, want)
		}
	}
	for _, name := range []string{"etcd-main", "etcd-main-", "etcd-main-01", "etcd-main--1", "etcd-main-x", "etcd-events-0", "etcd-main-full-snap"} {
		if got, ok := etcd.OrdinalOf(name); ok {
			t.Errorf("OrdinalOf(%q) = %d, true; want false", name, got)
		}
	}
}

func TestComponentLabels(t *testing.T) {
	g := NewWithT(t)
	etcd := minimalEtcd()
	g.Expect(etcd.ComponentLabels(druidv1alpha1.ComponentClientService, "etcd-main-client")).To(Equal(map[string]string{
		"app.kubernetes.io/managed-by": "etcd-druid",
		"app.kubernetes.io/part-of":    "etcd-main",
		"app.kubernetes.io/component":  "etcd-client-service",
		"app.kubernetes.io/name":       "etcd-main-client",
	}))
	// ManagedLabels is the StatefulSet selector: it must not pick up the per-object labels.
	g.Expect(etcd.ManagedLabels()).To(HaveLen(2))
}
