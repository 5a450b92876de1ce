package component_test

import (
	"context"
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/statefulset"
)

// storageClass creates a StorageClass named after the test's namespace that does or does not allow volume
// expansion (the apiserver's PersistentVolumeClaimResize admission reads it).
func storageClass(t *testing.T, ns string, expandable bool) string {
	t.Helper()
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%t", ns, expandable)},
		Provisioner: "example.org/volumes", AllowVolumeExpansion: ptr.To(expandable)}
	NewWithT(t).Expect(env.Client.Create(context.Background(), sc)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), sc) })
	return sc.Name
}

// memberClaims creates the members' PVCs as the StatefulSet controller would, with the claim template's
// request, bound (bound is false: the first one stays pending).
func memberClaims(t *testing.T, etcd *druidv1alpha1.Etcd, bound bool) {
	t.Helper()
	g, ctx := NewWithT(t), context.Background()
	sts := readStatefulSet(t, etcd)
	vct := sts.Spec.VolumeClaimTemplates[0]
	for i := range etcd.Spec.Replicas {
		pvc := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%s-%d", vct.Name, sts.Name, i), Namespace: etcd.Namespace, Labels: sts.Spec.Selector.MatchLabels},
			Spec:       vct.Spec,
		}
		g.Expect(env.Client.Create(ctx, pvc)).To(Succeed())
		if !bound && i == 0 {
			continue
		}
		pvc.Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, AccessModes: pvc.Spec.AccessModes,
			Capacity: corev1.ResourceList{corev1.ResourceStorage: vct.Spec.Resources.Requests[corev1.ResourceStorage]}}
		g.Expect(env.Client.Status().Update(ctx, pvc)).To(Succeed())
	}
}

// syncPlanned runs every operator as the spec flow does: the StatefulSet's through SyncPlanned, whose
// Synced it returns with its error; the others must succeed.
func syncPlanned(t *testing.T, registry component.Registry, etcd *druidv1alpha1.Etcd) (statefulset.Synced, error) {
	t.Helper()
	ctx := context.Background()
	var synced statefulset.Synced
	var syncErr error
	for _, reg := range registry {
		if planned, ok := reg.Operator.(statefulset.PlannedSyncer); ok {
			synced, syncErr = planned.SyncPlanned(ctx, etcd, nil, nil)
			continue
		}
		NewWithT(t).Expect(reg.Operator.Sync(ctx, etcd)).To(Succeed())
	}
	return synced, syncErr
}

func claimRequests(t *testing.T, etcd *druidv1alpha1.Etcd) []string {
	t.Helper()
	list := &corev1.PersistentVolumeClaimList{}
	NewWithT(t).Expect(env.Client.List(context.Background(), list, client.InNamespace(etcd.Namespace))).To(Succeed())
	var out []string
	for _, pvc := range list.Items {
		q := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
		out = append(out, pvc.Name+"="+q.String())
	}
	return out
}

// A larger spec.storageCapacity reaches the running members: every bound PVC asks for it (a pending one is
// left to the next sync), each raise is an event, and the StatefulSet is created again with the larger
// claim template once it is rolled out (not before, and the sync does not wait for it).
func TestLargerStorageCapacityRaisesTheMembersClaims(t *testing.T) {
	g, ctx := NewWithT(t), context.Background()
	ns := env.CreateNamespace(t)
	class := storageClass(t, ns, true)
	etcd := createEtcd(t, ns, 3, func(e *druidv1alpha1.Etcd) {
		e.Spec.StorageClass = ptr.To(class)
		e.Spec.StorageCapacity = ptr.To(resourceMust("1Gi"))
	})
	registry, _ := newRegistry(t)
	g.Expect(registry.SyncAll(ctx, etcd)).To(Succeed())
	memberClaims(t, etcd, false)

	etcd = updateEtcd(t, etcd, func(e *druidv1alpha1.Etcd) { e.Spec.StorageCapacity = ptr.To(resourceMust("2Gi")) })
	synced, err := syncPlanned(t, registry, etcd)
	g.Expect(err).NotTo(HaveOccurred(), "a StatefulSet that is not rolled out is not recreated for its claim template, nor does the sync wait for it")
	g.Expect(claimRequests(t, etcd)).To(ConsistOf("etcd-main-etcd-main-0=1Gi", "etcd-main-etcd-main-1=2Gi", "etcd-main-etcd-main-2=2Gi"))
	g.Expect(synced.Events).To(ConsistOf(
		statefulset.Event{Reason: statefulset.EventReasonVolumeExpansionRequested, Message: "PVC etcd-main-etcd-main-1: storage request raised from 1Gi to 2Gi (spec.storageCapacity)"},
		statefulset.Event{Reason: statefulset.EventReasonVolumeExpansionRequested, Message: "PVC etcd-main-etcd-main-2: storage request raised from 1Gi to 2Gi (spec.storageCapacity)"},
	))

	// Rolled out: the StatefulSet is created again with the larger claim template (pods orphaned).
	sts := readStatefulSet(t, etcd)
	sts.Status = appsv1.StatefulSetStatus{ObservedGeneration: sts.Generation, Replicas: 3, ReadyReplicas: 3, UpdatedReplicas: 3,
		CurrentRevision: "r1", UpdateRevision: "r1"}
	g.Expect(env.Client.Status().Update(ctx, sts)).To(Succeed())
	synced, err = syncPlanned(t, registry, etcd)
	expectRequeue(g, err, statefulset.EventReasonAdoptionRecreating)
	g.Expect(err.Error()).To(ContainSubstring("spec.volumeClaimTemplates storage 1Gi, below spec.storageCapacity 2Gi"))
	g.Expect(synced.Events).To(BeEmpty(), "a second sync raises nothing again")
}

// A StorageClass that does not allow expansion: the apiserver refuses the larger request, the claims keep
// theirs, and the refusal is a Warning event that says why.
func TestStorageCapacityOnAClassWithoutExpansionIsAWarning(t *testing.T) {
	g, ctx := NewWithT(t), context.Background()
	ns := env.CreateNamespace(t)
	class := storageClass(t, ns, false)
	etcd := createEtcd(t, ns, 1, func(e *druidv1alpha1.Etcd) {
		e.Spec.StorageClass = ptr.To(class)
		e.Spec.StorageCapacity = ptr.To(resourceMust("1Gi"))
	})
	registry, _ := newRegistry(t)
	g.Expect(registry.SyncAll(ctx, etcd)).To(Succeed())
	memberClaims(t, etcd, true)

	etcd = updateEtcd(t, etcd, func(e *druidv1alpha1.Etcd) { e.Spec.StorageCapacity = ptr.To(resourceMust("2Gi")) })
	synced, _ := syncPlanned(t, registry, etcd)
	g.Expect(claimRequests(t, etcd)).To(ConsistOf("etcd-main-etcd-main-0=1Gi"))
	g.Expect(synced.Events).To(HaveLen(1))
	g.Expect(synced.Events[0].Warning).To(BeTrue())
	g.Expect(synced.Events[0].Reason).To(Equal(statefulset.EventReasonVolumeExpansionRefused))
	g.Expect(synced.Events[0].Message).To(And(ContainSubstring("PVC etcd-main-etcd-main-0 stays at 1Gi although spec.storageCapacity asks for 2Gi"),
		ContainSubstring("storageclass that provisions the pvc must support resize")))
}
