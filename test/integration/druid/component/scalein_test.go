package component_test

import (
	"context"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/statefulset"
)

// markLeft writes the backup leader's left-cluster mark for memberID on lease name.
func markLeft(t *testing.T, ns, name, memberID string) {
	t.Helper()
	lease := get(t, ns, name, &coordinationv1.Lease{}).(*coordinationv1.Lease)
	metav1.SetMetaDataAnnotation(&lease.ObjectMeta, druidv1alpha1.LeftClusterAnnotation, memberID)
	NewWithT(t).Expect(env.Client.Update(context.Background(), lease)).To(Succeed())
}

// A scale-in 3 → 1 with the test in the sidecars' role: the ConfigMap names one member at once, the
// StatefulSet and the member leases stay at 3 while members are still in the cluster (a mark for another
// member ID does not count), and replicas go to 1 once both dropped members are marked.
func TestScaleInSequence(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.CreateNamespace(t)
	etcd := createEtcd(t, ns, 3)
	registry, _ := newRegistry(t)
	replicas := func() int32 {
		return *get(t, ns, "etcd-main", &appsv1.StatefulSet{}).(*appsv1.StatefulSet).Spec.Replicas
	}
	g.Expect(registry.SyncAll(ctx, etcd)).To(Succeed())
	renewAsSidecar(t, ns, "etcd-main-0", "a0:c:Leader", "false")
	renewAsSidecar(t, ns, "etcd-main-1", "a1:c:Member", "false")
	renewAsSidecar(t, ns, "etcd-main-2", "a2:c:Member", "false")

	etcd = scaledIn(etcd, 1)
	err := registry.SyncAll(ctx, etcd)
	requeue, ok := component.IsRequeue(err)
	g.Expect(ok).To(BeTrue(), "expected a requeue, got %v", err)
	g.Expect(requeue.Event).To(Equal(statefulset.EventReasonScaleInHeldBack))
	g.Expect(requeue.Reason).To(ContainSubstring("removed etcd-main-2, etcd-main-1 from the etcd membership"))
	g.Expect(replicas()).To(Equal(int32(3)))
	cm := get(t, ns, "etcd-main-config", &corev1.ConfigMap{}).(*corev1.ConfigMap)
	g.Expect(strings.Count(cm.Data["etcd.conf.yaml"], "=http://")).To(Equal(1), "the configuration already names one member")
	g.Expect(leaseNames(t, registry.Get(component.KindMemberLease), etcd)).To(ConsistOf("etcd-main-0", "etcd-main-1", "etcd-main-2"))

	markLeft(t, ns, "etcd-main-2", "a2")
	markLeft(t, ns, "etcd-main-1", "ffff") // a mark for an older member of that name
	requeue, ok = component.IsRequeue(registry.SyncAll(ctx, etcd))
	g.Expect(ok).To(BeTrue())
	g.Expect(requeue.Reason).To(ContainSubstring("removed etcd-main-1 from"))
	g.Expect(replicas()).To(Equal(int32(3)))

	markLeft(t, ns, "etcd-main-1", "a1")
	g.Expect(registry.SyncAll(ctx, etcd)).To(Succeed())
	g.Expect(replicas()).To(Equal(int32(1)))
	// The next sync deletes the dropped members' leases (the heal flow does so as well, case 12).
	g.Expect(registry.SyncAll(ctx, etcd)).To(Succeed())
	g.Expect(leaseNames(t, registry.Get(component.KindMemberLease), etcd)).To(ConsistOf("etcd-main-0"))
}

// A member whose lease was never renewed holds the scale-in back too (its lease may be new while its volume
// holds a voter, e.g. after a wake-up) until the backup leader marks it as never joined; hibernation removes
// no member and waits for none.
func TestScaleInWaitsForTheLeaderAlsoOnMembersThatNeverRenewed(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.CreateNamespace(t)
	etcd := createEtcd(t, ns, 3)
	registry, _ := newRegistry(t)
	replicas := func() int32 {
		return *get(t, ns, "etcd-main", &appsv1.StatefulSet{}).(*appsv1.StatefulSet).Spec.Replicas
	}
	g.Expect(registry.SyncAll(ctx, etcd)).To(Succeed())
	renewAsSidecar(t, ns, "etcd-main-0", "a0:c:Leader", "false")
	renewAsSidecar(t, ns, "etcd-main-1", "a1:c:Member", "false")

	etcd = scaledIn(etcd, 2)
	_, held := component.IsRequeue(registry.SyncAll(ctx, etcd))
	g.Expect(held).To(BeTrue(), "a lease never renewed is no evidence that etcd-main-2 is not a voter")
	g.Expect(replicas()).To(Equal(int32(3)))
	markLeft(t, ns, "etcd-main-2", druidv1alpha1.LeftClusterNeverJoined)
	g.Expect(registry.SyncAll(ctx, etcd)).To(Succeed(), "the leader found no member etcd-main-2")
	g.Expect(replicas()).To(Equal(int32(2)))

	etcd = updateEtcd(t, etcd, func(e *druidv1alpha1.Etcd) { e.Spec.Replicas = 0 })
	g.Expect(registry.SyncAll(ctx, etcd)).To(Succeed())
	g.Expect(replicas()).To(Equal(int32(0)))
	g.Expect(leaseNames(t, registry.Get(component.KindMemberLease), etcd)).To(BeEmpty())
}
