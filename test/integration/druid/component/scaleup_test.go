package component_test

import (
	"context"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
)

// TestPeerTLSScaleUpSequence walks the reference's "Scale-up 1 → N with peer TLS" with the test in the
// sidecar's role: the StatefulSet is rolled at one replica and the sync requeues while the member lease says
// "false"; replicas are raised to 3 only after it says "true".
func TestPeerTLSScaleUpSequence(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.CreateNamespace(t)
	etcd := createEtcd(t, ns, 1)
	registry, _ := newRegistry(t)
	statefulSet := func() *appsv1.StatefulSet {
		return get(t, ns, "etcd-main", &appsv1.StatefulSet{}).(*appsv1.StatefulSet)
	}

	g.Expect(registry.SyncAll(ctx, etcd)).To(Succeed())
	g.Expect(statefulSet().Spec.Replicas).To(Equal(ptr.To(int32(1))))
	g.Expect(volumesByName(statefulSet())).NotTo(HaveKey("peer-url-ca-etcd"))
	renewAsSidecar(t, ns, "etcd-main-0", "8e9e05c52164694d:cdf818194e3a8c32:Leader", "false")
	before := statefulSet()

	etcd = updateEtcd(t, etcd, func(e *druidv1alpha1.Etcd) {
		e.Spec.Replicas = 3
		withPeerTLS(e)
	})

	// 1st sync: config map for 3 https members, StatefulSet rolled at 1 replica with the peer TLS volumes.
	err := registry.SyncAll(ctx, etcd)
	requeue, ok := component.IsRequeue(err)
	g.Expect(ok).To(BeTrue(), "expected a requeue, got %v", err)
	g.Expect(requeue.Reason).To(ContainSubstring("peer TLS newly enabled"))
	cm := get(t, ns, "etcd-main-config", &corev1.ConfigMap{}).(*corev1.ConfigMap)
	g.Expect(strings.Count(cm.Data["etcd.conf.yaml"], "=https://")).To(Equal(3))
	rolled := statefulSet()
	g.Expect(rolled.Spec.Replicas).To(Equal(ptr.To(int32(1))))
	g.Expect(rolled.Generation).To(BeNumerically(">", before.Generation), "the template must change to restart the member")
	g.Expect(volumesByName(rolled)).To(HaveKey("peer-url-ca-etcd"))
	g.Expect(volumesByName(rolled)).To(HaveKey("peer-url-etcd-server-tls"))
	g.Expect(mounts(container(g, rolled, "etcd"))).To(HaveKeyWithValue("peer-url-etcd-server-tls", "/var/etcd/ssl/peer/server"))
	g.Expect(rolled.Spec.Template.Annotations["checksum/etcd-configmap"]).NotTo(Equal(before.Spec.Template.Annotations["checksum/etcd-configmap"]))

	// 2nd sync: the member has not switched yet (lease "false"): still 1 replica, still requeued, no new rollout.
	err = registry.SyncAll(ctx, etcd)
	requeue, ok = component.IsRequeue(err)
	g.Expect(ok).To(BeTrue(), "expected a requeue, got %v", err)
	g.Expect(requeue.Reason).To(ContainSubstring("every existing member lease"))
	g.Expect(statefulSet().Spec.Replicas).To(Equal(ptr.To(int32(1))))
	g.Expect(statefulSet().Generation).To(Equal(rolled.Generation))
	lease := get(t, ns, "etcd-main-0", &coordinationv1.Lease{}).(*coordinationv1.Lease)
	g.Expect(lease.Spec.HolderIdentity).To(Equal(ptr.To("8e9e05c52164694d:cdf818194e3a8c32:Leader")), "druid never overwrites the sidecar's lease")

	// The sidecar updates the peer URL and flips the annotation; the next sync raises replicas.
	renewAsSidecar(t, ns, "etcd-main-0", "8e9e05c52164694d:cdf818194e3a8c32:Leader", "true")
	g.Expect(registry.SyncAll(ctx, etcd)).To(Succeed())
	scaled := statefulSet()
	g.Expect(scaled.Spec.Replicas).To(Equal(ptr.To(int32(3))))
	g.Expect(container(g, scaled, "etcd").ReadinessProbe.HTTPGet.Path).To(Equal("/readyz"))
	names, err := registry.Get(component.KindMemberLease).GetExistingResourceNames(ctx, etcd)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(names).To(ConsistOf("etcd-main-0", "etcd-main-1", "etcd-main-2"))
}

// A cluster that had peer TLS from the start scales up at once when its member already reports TLS.
func TestScaleUpWithPeerTLSAlreadyActive(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.CreateNamespace(t)
	etcd := createEtcd(t, ns, 1, withPeerTLS)
	registry, _ := newRegistry(t)
	g.Expect(registry.SyncAll(ctx, etcd)).To(Succeed())
	renewAsSidecar(t, ns, "etcd-main-0", "1:2:Leader", "true")

	etcd = updateEtcd(t, etcd, func(e *druidv1alpha1.Etcd) { e.Spec.Replicas = 3 })
	g.Expect(registry.SyncAll(ctx, etcd)).To(Succeed())
	g.Expect(get(t, ns, "etcd-main", &appsv1.StatefulSet{}).(*appsv1.StatefulSet).Spec.Replicas).To(Equal(ptr.To(int32(3))))
}
