package webhook

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/webhook/protection"
)

const mallory = "mallory@example.com"

// protectedSetup creates an Etcd and a few objects labelled as druid's components of it.
type protectedSetup struct {
	etcd        *druidv1alpha1.Etcd
	configMap   *corev1.ConfigMap
	lease       *coordinationv1.Lease
	statefulSet *appsv1.StatefulSet
	pvc         *corev1.PersistentVolumeClaim
}

func newProtectedSetup(t *testing.T) *protectedSetup {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	etcd := exampleEtcd(t)
	g.Expect(env.Client.Create(ctx, etcd)).To(Succeed())
	meta := func(name, component string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: etcd.Namespace, Labels: druidv1alpha1.ComponentLabels(etcd, component, name)}
	}
	s := &protectedSetup{
		etcd:      etcd,
		configMap: &corev1.ConfigMap{ObjectMeta: meta(druidv1alpha1.ConfigMapName(etcd), druidv1alpha1.ComponentConfigMap), Data: map[string]string{"etcd.conf.yaml": "name: x"}},
		lease:     &coordinationv1.Lease{ObjectMeta: meta(druidv1alpha1.MemberLeaseName(etcd, 0), druidv1alpha1.ComponentMemberLease)},
		statefulSet: &appsv1.StatefulSet{
			ObjectMeta: meta(druidv1alpha1.StatefulSetName(etcd), druidv1alpha1.ComponentStatefulSet),
			Spec: appsv1.StatefulSetSpec{
				Replicas: ptr.To(int32(1)),
				Selector: &metav1.LabelSelector{MatchLabels: druidv1alpha1.ManagedLabels(etcd)},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: druidv1alpha1.ManagedLabels(etcd)},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "etcd", Image: "etcd-wrapper"}}},
				},
			},
		},
		pvc: &corev1.PersistentVolumeClaim{
			ObjectMeta: meta("etcd-main-etcd-main-0", druidv1alpha1.ComponentStatefulSet),
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			},
		},
	}
	druid := clientAs(t, druidUser)
	for _, obj := range []client.Object{s.configMap, s.lease, s.statefulSet, s.pvc} {
		g.Expect(druid.Create(ctx, obj)).To(Succeed())
	}
	return s
}

func TestProtectionDeniesOthersAndNamesTheEscapeHatch(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	s := newProtectedSetup(t)
	others := clientAs(t, mallory)

	s.configMap.Data["etcd.conf.yaml"] = "name: hijacked"
	err := others.Update(ctx, s.configMap)
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "update denied, got %v", err)
	g.Expect(err.Error()).To(ContainSubstring(druidv1alpha1.DisableEtcdComponentProtectionAnnotation))

	g.Expect(apierrors.IsForbidden(others.Delete(ctx, s.lease))).To(BeTrue(), "lease deletion denied")
	g.Expect(apierrors.IsForbidden(others.Delete(ctx, s.pvc))).To(BeTrue(), "PVC deletion denied")

	scale := &autoscalingv1.Scale{}
	g.Expect(others.SubResource("scale").Get(ctx, s.statefulSet, scale)).To(Succeed())
	scale.Spec.Replicas = 0
	err = others.SubResource("scale").Update(ctx, s.statefulSet, client.WithSubResourceBody(scale))
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "scaling the StatefulSet denied, got %v", err)

	// Nothing changed.
	sts := &appsv1.StatefulSet{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(s.statefulSet), sts)).To(Succeed())
	g.Expect(*sts.Spec.Replicas).To(Equal(int32(1)))
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(s.lease), &coordinationv1.Lease{})).To(Succeed())
}

func TestProtectionAllowsDruidExemptUsersAndTheEtcdServiceAccountOnLeases(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	s := newProtectedSetup(t)
	etcdPods := clientAs(t, "system:serviceaccount:"+s.etcd.Namespace+":"+s.etcd.Name)

	s.lease.Spec.HolderIdentity = ptr.To("8e9e05c52164694d:cdf818194e3a8c32:Leader")
	g.Expect(etcdPods.Update(ctx, s.lease)).To(Succeed(), "the sidecar renews its member lease")
	g.Expect(apierrors.IsForbidden(etcdPods.Delete(ctx, s.lease))).To(BeTrue(), "but may not delete it")
	s.configMap.Data["etcd.conf.yaml"] = "name: from-pod"
	g.Expect(apierrors.IsForbidden(etcdPods.Update(ctx, s.configMap))).To(BeTrue(), "nor change other components")

	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(s.configMap), s.configMap)).To(Succeed())
	s.configMap.Data["etcd.conf.yaml"] = "name: from-druid"
	g.Expect(clientAs(t, druidUser).Update(ctx, s.configMap)).To(Succeed(), "druid itself")
	g.Expect(clientAs(t, exemptUser).Delete(ctx, s.pvc)).To(Succeed(), "an exempt service account")
}

func TestProtectionStepsAsideWhenDisabledOrOrphaned(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	s := newProtectedSetup(t)
	others := clientAs(t, mallory)

	patch := client.MergeFrom(s.etcd.DeepCopy())
	metav1.SetMetaDataAnnotation(&s.etcd.ObjectMeta, druidv1alpha1.DisableEtcdComponentProtectionAnnotation, "")
	g.Expect(env.Client.Patch(ctx, s.etcd, patch)).To(Succeed())
	g.Expect(others.Delete(ctx, s.lease)).To(Succeed(), "the annotation lets changes through")

	unlabelled := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "user-config", Namespace: s.etcd.Namespace}}
	g.Expect(others.Create(ctx, unlabelled)).To(Succeed())
	g.Expect(others.Delete(ctx, unlabelled)).To(Succeed(), "objects druid does not manage are not protected")

	orphan := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "orphan", Namespace: s.etcd.Namespace,
		Labels: map[string]string{druidv1alpha1.LabelManagedByKey: druidv1alpha1.LabelManagedByValue, druidv1alpha1.LabelPartOfKey: "etcd-gone"}}}
	g.Expect(clientAs(t, druidUser).Create(ctx, orphan)).To(Succeed())
	g.Expect(others.Delete(ctx, orphan)).To(Succeed(), "components of an Etcd that no longer exists can be cleaned up")
}

// TestProtectionJudgesTheObjectBeforeTheUpdate checks that relabelling a component out of druid's hands is
// refused like changing it, so that a relabel-then-delete (or -scale) cannot get around the protection,
// for every kind including PVCs and the etcd pods, and that updates of pods and PVCs that keep their labels
// still pass.
func TestProtectionJudgesTheObjectBeforeTheUpdate(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	s := newProtectedSetup(t)
	others := clientAs(t, mallory)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: s.etcd.Name + "-0", Namespace: s.etcd.Namespace, Labels: druidv1alpha1.ManagedLabels(s.etcd)},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "etcd", Image: "etcd-wrapper"}}},
	}
	g.Expect(clientAs(t, druidUser).Create(ctx, pod)).To(Succeed())

	for _, obj := range []client.Object{s.configMap, s.lease, s.statefulSet, s.pvc, pod} {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
		relabelled := obj.DeepCopyObject().(client.Object)
		labels := relabelled.GetLabels()
		delete(labels, druidv1alpha1.LabelManagedByKey)
		relabelled.SetLabels(labels)
		err := others.Update(ctx, relabelled)
		g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "removing the managed-by label of %T denied, got %v", obj, err)

		relabelled = obj.DeepCopyObject().(client.Object)
		labels = relabelled.GetLabels()
		labels[druidv1alpha1.LabelPartOfKey] = "some-other-etcd"
		relabelled.SetLabels(labels)
		err = others.Update(ctx, relabelled)
		g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "moving %T to another Etcd denied, got %v", obj, err)
	}

	// Scaling after a refused relabel is still refused: the StatefulSet kept its labels.
	scale := &autoscalingv1.Scale{}
	g.Expect(others.SubResource("scale").Get(ctx, s.statefulSet, scale)).To(Succeed())
	scale.Spec.Replicas = 0
	g.Expect(apierrors.IsForbidden(others.SubResource("scale").Update(ctx, s.statefulSet, client.WithSubResourceBody(scale)))).To(BeTrue())
	g.Expect(apierrors.IsForbidden(others.Delete(ctx, s.pvc))).To(BeTrue())

	// Updates of pods and PVCs that keep their labels are kube-controller-manager's business.
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(s.pvc), s.pvc)).To(Succeed())
	metav1.SetMetaDataAnnotation(&s.pvc.ObjectMeta, "pv.kubernetes.io/bind-completed", "yes")
	g.Expect(others.Update(ctx, s.pvc)).To(Succeed(), "a PVC update that keeps the labels")
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
	pod.Labels["statefulset.kubernetes.io/pod-name"] = pod.Name
	g.Expect(others.Update(ctx, pod)).To(Succeed(), "a pod update that only adds a label")

	// Nothing was relabelled.
	for _, obj := range []client.Object{s.configMap, s.lease, s.statefulSet, s.pvc, pod} {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
		g.Expect(obj.GetLabels()).To(HaveKeyWithValue(druidv1alpha1.LabelManagedByKey, druidv1alpha1.LabelManagedByValue))
		g.Expect(obj.GetLabels()).To(HaveKeyWithValue(druidv1alpha1.LabelPartOfKey, s.etcd.Name))
	}
}

// TestLeaseRenewalsDoNotNeedDruid checks that the etcd pods' service account renews its member and snapshot
// leases while druid's webhook server is unreachable: a configuration like druid's (same rules, selector and
// match conditions, failurePolicy Fail) pointing at a closed port, limited to this test's namespace. Others'
// changes fail there, which shows the webhook is in the path.
func TestLeaseRenewalsDoNotNeedDruid(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	s := newProtectedSetup(t)
	snapshotLease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: druidv1alpha1.FullSnapshotLeaseName(s.etcd), Namespace: s.etcd.Namespace,
		Labels: druidv1alpha1.ComponentLabels(s.etcd, druidv1alpha1.ComponentSnapshotLease, druidv1alpha1.FullSnapshotLeaseName(s.etcd))}}
	g.Expect(clientAs(t, druidUser).Create(ctx, snapshotLease)).To(Succeed())

	down := protection.WebhookConfiguration(admissionregistrationv1.ServiceReference{}, nil, podControllerUsers)
	down.Name = "druid-down-" + s.etcd.Namespace
	closedPort := "https://127.0.0.1:1" + protection.Path
	for i := range down.Webhooks {
		down.Webhooks[i].ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: &closedPort}
		down.Webhooks[i].FailurePolicy = ptr.To(admissionregistrationv1.Fail)
		down.Webhooks[i].NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: s.etcd.Namespace}}
	}
	g.Expect(env.Client.Create(ctx, down)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), down) })

	// The apiserver picks the configuration up asynchronously: wait until druid's own changes fail.
	g.Eventually(func() error {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(s.configMap), s.configMap)).To(Succeed())
		s.configMap.Data["probe"] = time.Now().String()
		return clientAs(t, druidUser).Update(ctx, s.configMap)
	}).WithTimeout(30 * time.Second).Should(MatchError(ContainSubstring("failed calling webhook")))

	etcdPods := clientAs(t, "system:serviceaccount:"+s.etcd.Namespace+":"+druidv1alpha1.ServiceAccountName(s.etcd))
	for _, lease := range []*coordinationv1.Lease{s.lease, snapshotLease} {
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(lease), lease)).To(Succeed())
		lease.Spec.HolderIdentity = ptr.To("42")
		lease.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
		g.Expect(etcdPods.Update(ctx, lease)).To(Succeed(), "renewing %s with druid down", lease.Name)
	}

	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(s.lease), s.lease)).To(Succeed())
	s.lease.Spec.HolderIdentity = ptr.To("from-mallory")
	g.Expect(clientAs(t, mallory).Update(ctx, s.lease)).To(MatchError(ContainSubstring("failed calling webhook")), "others still go through the (failing) webhook")
	delete(s.lease.Labels, druidv1alpha1.LabelPartOfKey)
	g.Expect(etcdPods.Update(ctx, s.lease)).To(MatchError(ContainSubstring("failed calling webhook")), "relabelling is no renewal")
}

// Druid recreates a StatefulSet by deleting it with propagationPolicy Orphan; the apiserver keeps it until
// the garbage collector takes the "orphan" finalizer off. Whoever the collector runs as (here
// kube-controller-manager's own name, as in a cluster without service-account credentials), taking
// finalizers off an object whose deletion was admitted passes; the same user changing anything else on it
// is still refused, and so is taking a finalizer off an object that is not being deleted.
func TestProtectionLetsTheGarbageCollectorFinishAnAdmittedDeletion(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	s := newProtectedSetup(t)
	collector := clientAs(t, "system:kube-controller-manager")

	withFinalizer := s.configMap.DeepCopy()
	withFinalizer.Finalizers = []string{"example.org/keep"}
	g.Expect(clientAs(t, druidUser).Update(ctx, withFinalizer)).To(Succeed())
	withoutFinalizer := withFinalizer.DeepCopy()
	withoutFinalizer.Finalizers = nil
	g.Expect(apierrors.IsForbidden(collector.Update(ctx, withoutFinalizer))).To(BeTrue(), "a finalizer of an object not being deleted")

	terminating := deleteOrphaning(t, g, s)
	g.Expect(terminating.Finalizers).To(ContainElement(metav1.FinalizerOrphanDependents))

	alsoScaled := terminating.DeepCopy()
	alsoScaled.Finalizers = nil
	alsoScaled.Spec.Replicas = ptr.To(int32(0))
	g.Expect(apierrors.IsForbidden(collector.Update(ctx, alsoScaled))).To(BeTrue(), "another change riding along is refused")

	finished := terminating.DeepCopy()
	finished.Finalizers = nil
	g.Expect(collector.Update(ctx, finished)).To(Succeed(), "the collector finishes the orphaning deletion")
	expectStatefulSetGone(g, s)
}

// While druid recreates a StatefulSet (deleted with propagationPolicy Orphan), the "orphan" finalizer is
// the garbage collector's to take off, once it has orphaned the pods: taken off before, the StatefulSet
// goes and the collector deletes its pods, the running members, with it. Nobody else but exempt users may
// take it off (with other finalizers or alone); another finalizer still comes off as before, and the
// collector (here under its service account) finishes the deletion.
func TestProtectionLetsOnlyTheGarbageCollectorTakeTheOrphanFinalizerOff(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	s := newProtectedSetup(t)
	druid, others := clientAs(t, druidUser), clientAs(t, mallory)

	s.statefulSet.Finalizers = []string{"example.org/keep"}
	g.Expect(druid.Update(ctx, s.statefulSet)).To(Succeed())
	terminating := deleteOrphaning(t, g, s)
	g.Expect(terminating.Finalizers).To(ConsistOf("example.org/keep", metav1.FinalizerOrphanDependents))

	for _, keep := range [][]string{nil, {"example.org/keep"}} {
		stripped := terminating.DeepCopy()
		stripped.Finalizers = keep
		err := others.Update(ctx, stripped)
		g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "taking the orphan finalizer off (keeping %v), got %v", keep, err)
		g.Expect(err.Error()).To(ContainSubstring("garbage collector"))
	}

	otherOff := terminating.DeepCopy()
	otherOff.Finalizers = []string{metav1.FinalizerOrphanDependents}
	g.Expect(others.Update(ctx, otherOff)).To(Succeed(), "another finalizer comes off as before")

	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(s.statefulSet), terminating)).To(Succeed())
	finished := terminating.DeepCopy()
	finished.Finalizers = nil
	g.Expect(clientAs(t, "system:serviceaccount:kube-system:generic-garbage-collector").Update(ctx, finished)).To(Succeed(),
		"the garbage collector finishes the orphaning deletion")
	expectStatefulSetGone(g, s)
}

// A seed whose kube-controller-manager authenticates under its own name configures it
// (--garbage-collector-users); its garbage collector then finishes druid's orphaning deletion, which the
// default names alone would refuse.
func TestProtectionLetsTheConfiguredGarbageCollectorTakeTheOrphanFinalizerOff(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	s := newProtectedSetup(t)
	terminating := deleteOrphaning(t, g, s)
	terminating.Finalizers = nil
	g.Expect(clientAs(t, seedControllerManager).Update(ctx, terminating)).To(Succeed())
	expectStatefulSetGone(g, s)
}

// An exempt user may take the "orphan" finalizer off a protected StatefulSet that is being deleted, as it
// may change anything of it.
func TestProtectionLetsExemptUsersTakeTheOrphanFinalizerOff(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	s := newProtectedSetup(t)
	terminating := deleteOrphaning(t, g, s)
	terminating.Finalizers = nil
	g.Expect(clientAs(t, exemptUser).Update(ctx, terminating)).To(Succeed())
}

// deleteOrphaning deletes the setup's StatefulSet as druid does when it recreates one (propagationPolicy
// Orphan) and returns it as it is while the deletion waits for the "orphan" finalizer.
func deleteOrphaning(t *testing.T, g Gomega, s *protectedSetup) *appsv1.StatefulSet {
	ctx := context.Background()
	g.Expect(clientAs(t, druidUser).Delete(ctx, s.statefulSet, client.PropagationPolicy(metav1.DeletePropagationOrphan))).To(Succeed())
	terminating := &appsv1.StatefulSet{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(s.statefulSet), terminating)).To(Succeed())
	return terminating
}

// expectStatefulSetGone waits until the setup's StatefulSet is deleted.
func expectStatefulSetGone(g Gomega, s *protectedSetup) {
	g.Eventually(func() bool {
		return apierrors.IsNotFound(env.Client.Get(context.Background(), client.ObjectKeyFromObject(s.statefulSet), &appsv1.StatefulSet{}))
	}).Should(BeTrue())
}
