package component_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
)

// renewAsSidecar writes what a member's sidecar writes into its lease.
func renewAsSidecar(t *testing.T, ns, name, holder, tlsEnabled string) *coordinationv1.Lease {
	t.Helper()
	lease := get(t, ns, name, &coordinationv1.Lease{}).(*coordinationv1.Lease)
	lease.Spec.HolderIdentity = ptr.To(holder)
	lease.Spec.RenewTime = &metav1.MicroTime{Time: time.Now().Truncate(time.Microsecond)}
	metav1.SetMetaDataAnnotation(&lease.ObjectMeta, druidv1alpha1.TLSEnabledAnnotation, tlsEnabled)
	NewWithT(t).Expect(env.Client.Update(context.Background(), lease)).To(Succeed())
	return lease
}

func leaseNames(t *testing.T, op component.Operator, etcd *druidv1alpha1.Etcd) []string {
	t.Helper()
	names, err := op.GetExistingResourceNames(context.Background(), etcd)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	return names
}

func TestMemberLeasesKeepSidecarDataAndFollowReplicas(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.CreateNamespace(t)
	etcd := createEtcd(t, ns, 5)
	registry, _ := newRegistry(t)
	leases := registry.Get(component.KindMemberLease)

	g.Expect(leases.Sync(ctx, etcd)).To(Succeed())
	g.Expect(leaseNames(t, leases, etcd)).To(ConsistOf("etcd-main-0", "etcd-main-1", "etcd-main-2", "etcd-main-3", "etcd-main-4"))

	written := renewAsSidecar(t, ns, "etcd-main-0", "1a2b:3c4d:Leader", "true")
	// A lease of another Etcd in the same namespace must survive this Etcd's scale-down.
	other := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "etcd-events-4", Namespace: ns, Labels: map[string]string{
		"app.kubernetes.io/managed-by": "etcd-druid", "app.kubernetes.io/part-of": "etcd-events", "app.kubernetes.io/component": "etcd-member-lease"}}}
	g.Expect(env.Client.Create(ctx, other)).To(Succeed())

	etcd = scaledIn(etcd, 3)
	g.Expect(leases.Sync(ctx, etcd)).To(Succeed())
	g.Expect(leaseNames(t, leases, etcd)).To(ConsistOf("etcd-main-0", "etcd-main-1", "etcd-main-2"))
	for _, gone := range []string{"etcd-main-3", "etcd-main-4"} {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: gone}, &coordinationv1.Lease{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "lease %s of a removed member must be deleted", gone)
	}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(other), &coordinationv1.Lease{})).To(Succeed())

	kept := get(t, ns, "etcd-main-0", &coordinationv1.Lease{}).(*coordinationv1.Lease)
	g.Expect(kept.ResourceVersion).To(Equal(written.ResourceVersion), "sync must not rewrite a lease the sidecar renewed")
	g.Expect(kept.Spec.HolderIdentity).To(Equal(ptr.To("1a2b:3c4d:Leader")))
	g.Expect(kept.Spec.RenewTime.Time).To(BeTemporally("==", written.Spec.RenewTime.Time))
	g.Expect(kept.Annotations).To(HaveKeyWithValue(druidv1alpha1.TLSEnabledAnnotation, "true"))

	etcd = updateEtcd(t, etcd, func(e *druidv1alpha1.Etcd) { e.Spec.Replicas = 0 })
	g.Expect(leases.Sync(ctx, etcd)).To(Succeed())
	g.Expect(leaseNames(t, leases, etcd)).To(BeEmpty(), "hibernation removes every member lease")
}

func TestMemberLeasesUseMemberNamePrefix(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	etcd := createEtcd(t, ns, 3, func(e *druidv1alpha1.Etcd) { e.Spec.MemberNamePrefix = ptr.To("garden") })
	registry, _ := newRegistry(t)
	leases := registry.Get(component.KindMemberLease)
	g.Expect(leases.Sync(context.Background(), etcd)).To(Succeed())
	g.Expect(leaseNames(t, leases, etcd)).To(ConsistOf("garden-etcd-main-0", "garden-etcd-main-1", "garden-etcd-main-2"))
}

func TestSnapshotLeasesOnlyWithStore(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.CreateNamespace(t)
	etcd := createEtcd(t, ns, 1)
	registry, _ := newRegistry(t)
	snapshots := registry.Get(component.KindSnapshotLease)

	g.Expect(snapshots.Sync(ctx, etcd)).To(Succeed())
	g.Expect(leaseNames(t, snapshots, etcd)).To(BeEmpty(), "no store, no snapshot leases")

	etcd = updateEtcd(t, etcd, func(e *druidv1alpha1.Etcd) {
		e.Spec.Backup.Store = &druidv1alpha1.StoreSpec{Prefix: "p", Provider: ptr.To(druidv1alpha1.StorageProviderS3)}
	})
	g.Expect(snapshots.Sync(ctx, etcd)).To(Succeed())
	g.Expect(leaseNames(t, snapshots, etcd)).To(ConsistOf("etcd-main-full-snap", "etcd-main-delta-snap"))

	full := renewAsSidecar(t, ns, "etcd-main-full-snap", "4711", "false")
	g.Expect(snapshots.Sync(ctx, etcd)).To(Succeed())
	g.Expect(get(t, ns, "etcd-main-full-snap", &coordinationv1.Lease{}).(*coordinationv1.Lease).Spec.HolderIdentity).To(Equal(full.Spec.HolderIdentity))

	etcd = updateEtcd(t, etcd, func(e *druidv1alpha1.Etcd) { e.Spec.Backup.Store = nil })
	g.Expect(snapshots.Sync(ctx, etcd)).To(Succeed())
	g.Expect(leaseNames(t, snapshots, etcd)).To(BeEmpty(), "removing the store removes the snapshot leases")
}

// Once status.bootstrapWithExistingCluster says the Etcd joined its source cluster, every member lease
// carries the joined mark: the ones the sidecars renew (keeping what they wrote) and the empty ones a
// hibernated Etcd wakes up with. Before the join no lease carries it.
func TestMemberLeasesCarryTheJoinedMarkOnceTheEtcdJoinedAnExistingCluster(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.CreateNamespace(t)
	etcd := createEtcd(t, ns, 2)
	registry, _ := newRegistry(t)
	leases := registry.Get(component.KindMemberLease)
	marked := func() []string {
		var names []string
		for _, name := range leaseNames(t, leases, etcd) {
			lease := get(t, ns, name, &coordinationv1.Lease{}).(*coordinationv1.Lease)
			if lease.Annotations[druidv1alpha1.JoinedExistingClusterAnnotation] == "true" {
				names = append(names, name)
			}
		}
		return names
	}

	g.Expect(leases.Sync(ctx, etcd)).To(Succeed())
	g.Expect(marked()).To(BeEmpty(), "not joined yet")
	renewAsSidecar(t, ns, "etcd-main-0", "1a2b:3c4d:Leader", "false")

	stored := &druidv1alpha1.Etcd{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(etcd), stored)).To(Succeed())
	stored.Status.BootstrapWithExistingCluster = &druidv1alpha1.BootstrapWithExistingClusterStatus{
		JoinedAt: metav1.Now(), Members: []druidv1alpha1.BootstrapJoinedMember{{Name: "etcd-old-0", PeerURLs: []string{"https://etcd-old-0:2380"}}}}
	g.Expect(env.Client.Status().Update(ctx, stored)).To(Succeed())
	etcd = defaulted(stored)
	g.Expect(leases.Sync(ctx, etcd)).To(Succeed())
	g.Expect(marked()).To(ConsistOf("etcd-main-0", "etcd-main-1"))
	renewed := get(t, ns, "etcd-main-0", &coordinationv1.Lease{}).(*coordinationv1.Lease)
	g.Expect(renewed.Spec.HolderIdentity).To(Equal(ptr.To("1a2b:3c4d:Leader")), "the sidecar's record stays")

	etcd = updateEtcd(t, etcd, func(e *druidv1alpha1.Etcd) { e.Spec.Replicas = 0 })
	g.Expect(leases.Sync(ctx, etcd)).To(Succeed())
	g.Expect(leaseNames(t, leases, etcd)).To(BeEmpty())
	etcd = updateEtcd(t, etcd, func(e *druidv1alpha1.Etcd) { e.Spec.Replicas = 2 })
	g.Expect(leases.Sync(ctx, etcd)).To(Succeed())
	g.Expect(marked()).To(ConsistOf("etcd-main-0", "etcd-main-1"), "the leases a wake-up creates carry the mark")
}
