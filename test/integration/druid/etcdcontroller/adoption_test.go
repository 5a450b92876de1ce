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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	etcdcontroller "github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/etcd"
)

// An Etcd that an etcd-druid before v0.22 reconciled has objects labelled `instance`/`name` only, which
// druid's cache does not see. Before any spec sync, druid labels the leases, the pods and the
// StatefulSet (metadata only: the StatefulSet's generation stays), so that its status flow finds the
// members; otherwise it would report them missing and the rolling-update gate would hold back the sync
// that adopts them.
func TestDeployedObjectsAreLabelledBeforeTheStatusFlowNeedsThem(t *testing.T) {
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
			ServiceName: etcdName + "-peer", PodManagementPolicy: appsv1.ParallelPodManagement, Template: template}}
	g.Expect(env.Client.Create(ctx, sts)).To(Succeed())
	uids := map[string]string{}
	for i := 0; i < 3; i++ {
		name := fmt.Sprintf("%s-%d", etcdName, i)
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: maps.Clone(legacy)}, Spec: template.Spec}
		g.Expect(env.Client.Create(ctx, pod)).To(Succeed())
		uids[name] = string(pod.UID)
		lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: maps.Clone(legacy), OwnerReferences: owner},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(fmt.Sprintf("%x:c1:Member", i+1)), RenewTime: &metav1.MicroTime{Time: time.Now()}}}
		g.Expect(env.Client.Create(ctx, lease)).To(Succeed())
	}
	// The deployed druid had reconciled this generation.
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
			g.Expect(lease.Labels).To(HaveKeyWithValue("instance", etcdName), "the deployed druid's label stays")
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
		list := &corev1.EventList{}
		g.Expect(env.Client.List(ctx, list, client.InNamespace(ns), client.MatchingFields{"reason": etcdcontroller.EventReasonAdoptedLabels})).To(Succeed())
		g.Expect(list.Items).NotTo(BeEmpty())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}
