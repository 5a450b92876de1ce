package etcdcontroller_test

import (
	"fmt"
	"maps"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/statefulset"
	etcdcontroller "github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/etcd"
)

// An Etcd that an etcd-druid before v0.22 reconciled has objects labelled `instance`/`name` only, which
// druid's cache does not see. Before any spec sync, druid labels the leases, the pods and the
// StatefulSet (metadata only: the StatefulSet's generation stays), so that its status flow finds the
// members; otherwise it would report them missing and the rolling-update gate would hold back the sync
// that adopts them. The spec reconcile then adopts the StatefulSet through the gate with one template
// change, recreates it with druid's selector, and deletes no pod.
func TestUpstreamObjectsAreAdoptedThroughTheReconciler(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	etcd := createEtcd(t, ns, 3, func(e *druidv1alpha1.Etcd) {
		e.Annotations = map[string]string{druidv1alpha1.SuspendEtcdSpecReconcileAnnotation: "true"}
	})
	legacy := map[string]string{"instance": etcdName, "name": "etcd"}
	owner := []metav1.OwnerReference{{APIVersion: "druid.gardener.cloud/v1alpha1", Kind: "Etcd", Name: etcdName, UID: etcd.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
	template := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: maps.Clone(legacy)},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "etcd", Image: "deployed/etcd-wrapper:v0.1.1"}}}}
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: etcdName, Namespace: ns, Labels: maps.Clone(legacy), OwnerReferences: owner},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To(int32(3)), Selector: &metav1.LabelSelector{MatchLabels: legacy},
			ServiceName: etcdName + "-peer", PodManagementPolicy: appsv1.ParallelPodManagement, Template: template,
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: etcdName},
				Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("16Gi")}}}}}}}
	g.Expect(env.Client.Create(ctx, sts)).To(Succeed())
	uids := map[string]string{}
	for i := 0; i < 3; i++ {
		name := fmt.Sprintf("%s-%d", etcdName, i)
		// The pods are the StatefulSet's (no StatefulSet controller runs here): adoption labels no other pod.
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: maps.Clone(legacy),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: sts.Name, UID: sts.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}}, Spec: template.Spec}
		g.Expect(env.Client.Create(ctx, pod)).To(Succeed())
		uids[name] = string(pod.UID)
		lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: maps.Clone(legacy), OwnerReferences: owner},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(fmt.Sprintf("%x:c1:Member", i+1)), RenewTime: &metav1.MicroTime{Time: time.Now()}}}
		g.Expect(env.Client.Create(ctx, lease)).To(Succeed())
	}
	// Upstream druid had reconciled this generation.
	g.Eventually(func(g Gomega) {
		stored := getEtcd(g, ns)
		stored.Status.ObservedGeneration = ptr.To(stored.Generation)
		g.Expect(env.Client.Status().Update(ctx, stored)).To(Succeed())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())

	g.Eventually(func(g Gomega) {
		for i := 0; i < 3; i++ {
			name := fmt.Sprintf("%s-%d", etcdName, i)
			lease := &coordinationv1.Lease{}
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, lease)).To(Succeed())
			g.Expect(lease.Labels).To(HaveKeyWithValue(druidv1alpha1.LabelComponentKey, druidv1alpha1.ComponentMemberLease))
			g.Expect(lease.Labels).To(HaveKeyWithValue("instance", etcdName), "upstream druid's label stays")
			pod := &corev1.Pod{}
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pod)).To(Succeed())
			g.Expect(pod.Labels).To(HaveKeyWithValue(druidv1alpha1.LabelPartOfKey, etcdName))
			g.Expect(string(pod.UID)).To(Equal(uids[name]))
		}
		current := statefulSet(g, ns)
		g.Expect(current.Labels).To(HaveKeyWithValue(druidv1alpha1.LabelManagedByKey, druidv1alpha1.LabelManagedByValue))
		g.Expect(current.Generation).To(Equal(int64(1)), "labelling must not touch the pod template")
		g.Expect(getEtcd(g, ns).Status.Members).To(HaveLen(3), "the status flow sees the adopted leases")
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())

	g.Eventually(func(g Gomega) {
		g.Expect(etcdEvents(g, ns, etcdcontroller.EventReasonAdoptedLabels)).NotTo(BeEmpty())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())

	// The members are healthy: the spec reconcile passes the rolling-update gate and writes druid's template,
	// which keeps the old selector's labels; it waits for the rollout.
	holders := map[string]string{}
	for i := 0; i < 3; i++ {
		name := fmt.Sprintf("%s-%d", etcdName, i)
		setPodReady(t, ns, name, true)
		holders[name] = holder(i)
	}
	startSidecars(t, ns, holders)
	expectCondition(t, ns, druidv1alpha1.ConditionTypeAllMembersReady, druidv1alpha1.ConditionTrue, druidv1alpha1.ReasonAllMembersReady)
	updateEtcd(t, ns, func(e *druidv1alpha1.Etcd) {
		delete(e.Annotations, druidv1alpha1.SuspendEtcdSpecReconcileAnnotation)
		e.Annotations[druidv1alpha1.GardenerOperationAnnotation] = druidv1alpha1.OperationReconcile
	})
	var rolled corev1.PodTemplateSpec
	g.Eventually(func(g Gomega) {
		g.Expect(etcdEvents(g, ns, statefulset.EventReasonAdoptionWaiting)).NotTo(BeEmpty())
		current := statefulSet(g, ns)
		g.Expect(current.Spec.Selector.MatchLabels).To(Equal(legacy))
		g.Expect(current.Spec.Template.Labels).To(HaveKeyWithValue(druidv1alpha1.LabelPartOfKey, etcdName))
		rolled = current.Spec.Template
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())

	// Rolled out: the StatefulSet is deleted with its pods orphaned; the garbage collector's part is ours.
	setStatefulSetRolledOut(t, ns, 3)
	g.Eventually(func(g Gomega) {
		g.Expect(statefulSet(g, ns).DeletionTimestamp).NotTo(BeNil())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Eventually(func(g Gomega) {
		current := statefulSet(g, ns)
		current.Finalizers = nil
		g.Expect(env.Client.Update(ctx, current)).To(Succeed())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())

	// Created again with druid's selector and the template the pods run; the reconcile succeeds.
	waitReconciled(t, ns)
	g.Eventually(func(g Gomega) {
		current := statefulSet(g, ns)
		g.Expect(current.Spec.Selector.MatchLabels).To(Equal(map[string]string{druidv1alpha1.LabelManagedByKey: druidv1alpha1.LabelManagedByValue, druidv1alpha1.LabelPartOfKey: etcdName}))
		g.Expect(equality.Semantic.DeepEqual(current.Spec.Template, rolled)).To(BeTrue(), "the pod template changed a second time")
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Expect(etcdEvents(g, ns, statefulset.EventReasonAdoptionRecreating)).NotTo(BeEmpty())
	for name, uid := range uids {
		g.Expect(podUID(g, ns, name)).To(BeEquivalentTo(uid))
	}
}
