package component_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/statefulset"
)

// adoptedEtcd is an Etcd as Gardener writes it for etcd-main: PVCs named main-etcd-etcd-main-<i>, a store.
func adoptedEtcd(t *testing.T, ns string) *druidv1alpha1.Etcd {
	return createEtcd(t, ns, 3, func(e *druidv1alpha1.Etcd) {
		e.Spec.VolumeClaimTemplate = ptr.To("main-etcd")
		e.Spec.Backup.Store = &druidv1alpha1.StoreSpec{Prefix: "shoot--p--s/etcd-main", Provider: ptr.To(druidv1alpha1.StorageProviderS3),
			SecretRef: &corev1.SecretReference{Name: "etcd-backup"}}
	})
}

func readStatefulSet(t *testing.T, etcd *druidv1alpha1.Etcd) *appsv1.StatefulSet {
	return get(t, etcd.Namespace, druidv1alpha1.StatefulSetName(etcd), &appsv1.StatefulSet{}).(*appsv1.StatefulSet)
}

// expectRequeue asserts that err asks for a retry with the given event.
func expectRequeue(g Gomega, err error, event string) {
	requeue, ok := component.IsRequeue(err)
	g.Expect(ok).To(BeTrue(), "expected a requeue, got %v", err)
	g.Expect(requeue.Event).To(Equal(event), requeue.Reason)
}

// expectSelectors asserts the pod selector of both Services and the PDB.
func expectSelectors(t *testing.T, etcd *druidv1alpha1.Etcd, want map[string]string) {
	g := NewWithT(t)
	for _, name := range []string{druidv1alpha1.ClientServiceName(etcd), druidv1alpha1.PeerServiceName(etcd)} {
		g.Expect(get(t, etcd.Namespace, name, &corev1.Service{}).(*corev1.Service).Spec.Selector).To(Equal(want), name)
	}
	g.Expect(get(t, etcd.Namespace, druidv1alpha1.PDBName(etcd), &policyv1.PodDisruptionBudget{}).(*policyv1.PodDisruptionBudget).Spec.Selector.MatchLabels).To(Equal(want))
}

// expectUIDs asserts that the pods and PVCs are the ones upstream druid left: none was deleted.
func expectUIDs(t *testing.T, etcd *druidv1alpha1.Etcd, uids map[string]string) {
	g := NewWithT(t)
	for name, uid := range uids {
		var obj client.Object = &corev1.Pod{}
		if _, isPod := druidv1alpha1.PodOrdinalOf(etcd, name); !isPod {
			obj = &corev1.PersistentVolumeClaim{}
		}
		g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: etcd.Namespace, Name: name}, obj)).To(Succeed(), name)
		g.Expect(string(obj.GetUID())).To(Equal(uid), name)
		g.Expect(obj.GetDeletionTimestamp()).To(BeNil(), name)
	}
}

// The objects of an etcd-druid before v0.22 (selector instance/name) are adopted with one roll: the
// template with druid's labels (and the old selector's) is patched once, the StatefulSet is deleted with
// its pods orphaned once they run it, and created again with druid's selector and the same template; the
// Services and the PDB keep selecting the running pods throughout; no pod or PVC is deleted or renamed.
func TestAdoptsOldSelectorStatefulSetWithOneRoll(t *testing.T) {
	g, ctx := NewWithT(t), context.Background()
	ns := env.CreateNamespace(t)
	etcd := adoptedEtcd(t, ns)
	old := upstreamVariant{old: true, podManagementPolicy: appsv1.ParallelPodManagement}
	uids := createUpstream(t, old, etcd)
	registry, counter := newRegistry(t)

	// First sync: every object is adopted; the StatefulSet keeps its immutable fields and gets the template.
	expectRequeue(g, registry.SyncAll(ctx, etcd), statefulset.EventReasonAdoptionWaiting)
	sts := readStatefulSet(t, etcd)
	rolled := sts.Spec.Template
	g.Expect(sts.Spec.Selector.MatchLabels).To(Equal(old.selector(etcd)))
	g.Expect(sts.Spec.VolumeClaimTemplates[0].Name).To(Equal("main-etcd"))
	g.Expect(rolled.Labels).To(And(HaveKeyWithValue("instance", etcd.Name), HaveKeyWithValue("name", "etcd"),
		HaveKeyWithValue(druidv1alpha1.LabelManagedByKey, druidv1alpha1.LabelManagedByValue), HaveKeyWithValue(druidv1alpha1.LabelPartOfKey, etcd.Name)))
	g.Expect(sts.Labels).To(HaveKeyWithValue("instance", etcd.Name), "a label of upstream druid is kept")
	g.Expect(sts.Annotations).To(HaveKeyWithValue("gardener.cloud/owned-by", ns+"/"+etcd.Name))
	expectManaged(g, sts, etcd, druidv1alpha1.ComponentStatefulSet)
	lease := get(t, ns, druidv1alpha1.MemberLeaseName(etcd, 0), &coordinationv1.Lease{})
	expectManaged(g, lease, etcd, druidv1alpha1.ComponentMemberLease)
	g.Expect(lease.GetAnnotations()).To(HaveKeyWithValue(druidv1alpha1.TLSEnabledAnnotation, "false"))
	expectSelectors(t, etcd, old.selector(etcd))
	generation := sts.Generation

	// While the members roll, nothing else changes: no second template, no deletion.
	expectRequeue(g, registry.SyncAll(ctx, etcd), statefulset.EventReasonAdoptionWaiting)
	g.Expect(readStatefulSet(t, etcd).Generation).To(Equal(generation))
	rollPods(t, etcd, rolled, "adopted")

	// Rolled out: the StatefulSet is deleted with its pods orphaned, and waited for.
	expectRequeue(g, registry.SyncAll(ctx, etcd), statefulset.EventReasonAdoptionRecreating)
	expectRequeue(g, registry.SyncAll(ctx, etcd), "")
	expectUIDs(t, etcd, uids)
	collectGarbage(t, etcd)
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(sts), &appsv1.StatefulSet{}))
	}).Should(BeTrue())

	// Created again with druid's selector and the template the pods run: no second roll.
	g.Expect(registry.SyncAll(ctx, etcd)).To(Succeed())
	sts = readStatefulSet(t, etcd)
	g.Expect(sts.Spec.Selector.MatchLabels).To(Equal(druidv1alpha1.ManagedLabels(etcd)))
	g.Expect(equality.Semantic.DeepEqual(sts.Spec.Template, rolled)).To(BeTrue(), "the pod template changed a second time")
	g.Expect(sts.Spec.VolumeClaimTemplates[0].Name).To(Equal("main-etcd"))
	g.Expect(sts.Spec.ServiceName).To(Equal(druidv1alpha1.PeerServiceName(etcd)))
	expectSelectors(t, etcd, druidv1alpha1.ManagedLabels(etcd))
	expectUIDs(t, etcd, uids)

	// Adopted: a further sync writes nothing.
	expectResyncWritesNothing(t, registry, counter, etcd)
}

// The objects of an etcd-druid from v0.22 on already have druid's selector: one template patch, no
// recreation, nothing deleted, and no error loop.
func TestAdoptsCurrentStatefulSetInPlace(t *testing.T) {
	g, ctx := NewWithT(t), context.Background()
	ns := env.CreateNamespace(t)
	etcd := adoptedEtcd(t, ns)
	current := upstreamVariant{podManagementPolicy: appsv1.ParallelPodManagement}
	uids := createUpstream(t, current, etcd)
	registry, counter := newRegistry(t)

	g.Expect(registry.SyncAll(ctx, etcd)).To(Succeed())
	sts := readStatefulSet(t, etcd)
	g.Expect(sts.Generation).To(Equal(int64(2)), "one template patch")
	g.Expect(sts.Spec.UpdateStrategy).To(Equal(appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}),
		"the upstream druid's RollingUpdate (with the apiserver's rollingUpdate defaults) becomes OnDelete in the same patch")
	g.Expect(sts.Spec.Selector.MatchLabels).To(Equal(druidv1alpha1.ManagedLabels(etcd)))
	g.Expect(sts.Spec.Template.Labels).NotTo(HaveKey("instance"))
	g.Expect(sts.Spec.VolumeClaimTemplates[0].Name).To(Equal("main-etcd"))
	expectManaged(g, sts, etcd, druidv1alpha1.ComponentStatefulSet)
	expectSelectors(t, etcd, druidv1alpha1.ManagedLabels(etcd))
	expectUIDs(t, etcd, uids)
	expectResyncWritesNothing(t, registry, counter, etcd)
}

// A StatefulSet with podManagementPolicy OrderedReady (the upstream chart rendered none) is recreated with
// Parallel; its pods are taken over without a second roll.
func TestAdoptionRecreatesOrderedReadyStatefulSet(t *testing.T) {
	g, ctx := NewWithT(t), context.Background()
	ns := env.CreateNamespace(t)
	etcd := adoptedEtcd(t, ns)
	uids := createUpstream(t, upstreamVariant{podManagementPolicy: appsv1.OrderedReadyPodManagement}, etcd)
	registry, _ := newRegistry(t)

	expectRequeue(g, registry.SyncAll(ctx, etcd), statefulset.EventReasonAdoptionWaiting)
	rolled := readStatefulSet(t, etcd).Spec.Template
	rollPods(t, etcd, rolled, "adopted")
	expectRequeue(g, registry.SyncAll(ctx, etcd), statefulset.EventReasonAdoptionRecreating)
	collectGarbage(t, etcd)
	g.Eventually(func() error { return registry.SyncAll(ctx, etcd) }).Should(Succeed())
	sts := readStatefulSet(t, etcd)
	g.Expect(sts.Spec.PodManagementPolicy).To(Equal(appsv1.ParallelPodManagement))
	g.Expect(equality.Semantic.DeepEqual(sts.Spec.Template, rolled)).To(BeTrue())
	expectUIDs(t, etcd, uids)
}

// An old-selector StatefulSet whose claim template is not the one the Etcd names is never recreated (a new
// one would put the members on new, empty volumes): it keeps its selector, the Services keep selecting its
// pods, the sync succeeds, and the kept fields are reported.
func TestAdoptionKeepsAStatefulSetWithAnotherClaimName(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	etcd := adoptedEtcd(t, ns)
	old := upstreamVariant{old: true, podManagementPolicy: appsv1.ParallelPodManagement, claim: etcd.Name}
	uids := createUpstream(t, old, etcd)
	registry, _ := newRegistry(t)

	synced, err := syncPlanned(t, registry, etcd)
	g.Expect(err).NotTo(HaveOccurred())
	sts := readStatefulSet(t, etcd)
	g.Expect(sts.Spec.Selector.MatchLabels).To(Equal(old.selector(etcd)))
	g.Expect(sts.Spec.VolumeClaimTemplates[0].Name).To(Equal(etcd.Name))
	g.Expect(sts.DeletionTimestamp).To(BeNil())
	g.Expect(synced.Notices).To(ContainElements(ContainSubstring("spec.volumeClaimTemplates [etcd-main] kept"), ContainSubstring("not recreated")))
	expectSelectors(t, etcd, old.selector(etcd))
	expectUIDs(t, etcd, uids)
}

// Rolling back: upstream druid (v0.22+) writes its StatefulSet, Services and PDB over the ones ours
// left, with its own immutable fields (selector, serviceName, podManagementPolicy, claim template),
// selectors and updateStrategy RollingUpdate over our OnDelete. The apiserver accepts that on objects our druid created, also on a StatefulSet the adoption
// recreated (it is created the same way); a mismatch would fail upstream druid on every sync.
func TestUpstreamDruidCanWriteOverWhatOursLeaves(t *testing.T) {
	g, ctx := NewWithT(t), context.Background()
	ns := env.CreateNamespace(t)
	etcd := adoptedEtcd(t, ns)
	registry, _ := newRegistry(t)
	g.Expect(registry.SyncAll(ctx, etcd)).To(Succeed())

	upstream := upstreamVariant{podManagementPolicy: appsv1.ParallelPodManagement}
	sts := readStatefulSet(t, etcd)
	sts.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType}
	sts.Spec.Selector.MatchLabels = upstream.selector(etcd)
	sts.Spec.ServiceName, sts.Spec.PodManagementPolicy = druidv1alpha1.PeerServiceName(etcd), appsv1.ParallelPodManagement
	sts.Spec.VolumeClaimTemplates[0].Name = druidv1alpha1.VolumeClaimTemplateName(etcd)
	sts.Spec.VolumeClaimTemplates[0].Spec = upstreamClaimSpec(etcd)
	sts.Spec.VolumeClaimTemplates[0].Spec.VolumeMode = ptr.To(corev1.PersistentVolumeFilesystem)
	sts.Spec.Template = upstreamPodTemplate(upstream, etcd)
	sts.Spec.Template.Spec.Volumes = nil
	g.Expect(env.Client.Update(ctx, sts)).To(Succeed(), "upstream druid's StatefulSet over ours")
	g.Expect(sts.Spec.UpdateStrategy).To(Equal(appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType}),
		"no partition: the StatefulSet controller rolls every pod still out of date")

	for _, name := range []string{druidv1alpha1.ClientServiceName(etcd), druidv1alpha1.PeerServiceName(etcd)} {
		svc := get(t, ns, name, &corev1.Service{}).(*corev1.Service)
		g.Expect(svc.Spec.Selector).To(Equal(upstream.selector(etcd)), name)
		svc.Labels = upstream.labels(etcd, "service", name)
		g.Expect(env.Client.Update(ctx, svc)).To(Succeed(), name)
	}
	pdb := get(t, ns, druidv1alpha1.PDBName(etcd), &policyv1.PodDisruptionBudget{}).(*policyv1.PodDisruptionBudget)
	g.Expect(pdb.Spec.Selector.MatchLabels).To(Equal(upstream.selector(etcd)))
}
