package etcdcontroller_test

import (
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	etcdcontroller "github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/etcd"
)

// The member pod updates under updateStrategy OnDelete (podupdate): envtest has no StatefulSet controller
// and no kubelet, so these tests play both: they write the StatefulSet's updateRevision, recreate a pod
// druid deleted with the new revision label, and set its readiness and container state.

// A member crash-loops (its etcd container waits in CrashLoopBackOff, its lease expired, AllMembersReady is
// False) when a new pod template arrives: the template reaches the StatefulSet, and the serving members wait
// until the crash-looping one runs it and serves again (it goes first: it does not count toward the quorum;
// the heal flow's case 9 may delete it too, both are fine). Then the follower goes before the leader, one
// at a time, each only once the one before serves again.
func TestFixingTemplateReachesANotReadyMemberAndTheLeaderGoesLast(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	s := healthyCluster(t, ns, 3)
	runRevision(t, ns, "r1", 0, 1, 2)
	s.set("etcd-main-1", leaderHolder(1))

	failMember(t, ns, s, 2)
	setEtcdContainerWaiting(t, ns, "etcd-main-2", "CrashLoopBackOff")
	expectCondition(t, ns, druidv1alpha1.ConditionTypeAllMembersReady, druidv1alpha1.ConditionFalse, druidv1alpha1.ReasonNotAllMembersReady)
	serving := podUIDs(g, ns, 0, 1)

	changeImage(t, ns, "example.org/etcd-wrapper:v2")
	g.Eventually(func(g Gomega) {
		sts := statefulSet(g, ns)
		g.Expect(sts.Spec.Template.Spec.Containers[0].Image).To(Equal("example.org/etcd-wrapper:v2"))
		g.Expect(sts.Spec.UpdateStrategy).To(Equal(appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed(), "the fixing template reaches the StatefulSet")
	setUpdateRevision(t, ns, "r2")

	expectReplaced(t, ns, 2, serving)
	recreateMember(t, ns, 2, "r2", false)
	g.Consistently(func(g Gomega) { g.Expect(podUIDs(g, ns, 0, 1)).To(Equal(serving)) }).
		WithTimeout(2*time.Second).WithPolling(200*time.Millisecond).Should(Succeed(), "no serving member goes while the replaced one does not serve")

	setPodReady(t, ns, "etcd-main-2", true)
	s.resume("etcd-main-2", holder(2))
	expectReplaced(t, ns, 0, podUIDs(g, ns, 1, 2))
	expectUpdateEvent(t, ns, "etcd-main-0", "follower")
	recreateMember(t, ns, 0, "r2", false)
	g.Consistently(func(g Gomega) { g.Expect(podUID(g, ns, "etcd-main-1")).To(Equal(serving["etcd-main-1"])) }).
		WithTimeout(2*time.Second).WithPolling(200*time.Millisecond).Should(Succeed(), "the leader waits for the follower")

	setPodReady(t, ns, "etcd-main-0", true)
	expectReplaced(t, ns, 1, podUIDs(g, ns, 0, 2))
	expectUpdateEvent(t, ns, "etcd-main-1", "leader")
	recreateMember(t, ns, 1, "r2", true)

	done := podUIDs(g, ns, 0, 1, 2)
	g.Consistently(func(g Gomega) { g.Expect(podUIDs(g, ns, 0, 1, 2)).To(Equal(done)) }).
		WithTimeout(2*time.Second).WithPolling(200*time.Millisecond).Should(Succeed(), "every member runs the update revision")
}

// The scenario DEP-07 of upstream etcd-druid starts from: a new template with a bad image. The first member
// replaced crash-loops on it, so no further member is replaced (event MemberPodUpdateHeld) and the cluster
// keeps two serving members; the next template (a good image) goes to the crash-looping member first.
func TestBadRevisionIsNotRolledFurtherAndTheNextTemplateReachesItsVictimFirst(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	s := healthyCluster(t, ns, 3)
	runRevision(t, ns, "r1", 0, 1, 2)
	s.set("etcd-main-0", leaderHolder(0))

	changeImage(t, ns, "example.org/etcd-wrapper:bad")
	g.Eventually(func(g Gomega) string { return statefulSet(g, ns).Spec.Template.Spec.Containers[0].Image }).
		WithTimeout(timeout).WithPolling(poll).Should(Equal("example.org/etcd-wrapper:bad"))
	setUpdateRevision(t, ns, "r2")
	expectReplaced(t, ns, 2, podUIDs(g, ns, 0, 1))
	expectUpdateEvent(t, ns, "etcd-main-2", "follower")
	// Its sidecar keeps renewing the lease here, so that the heal flow's case 9 (which would delete the
	// crash-looping pod of a NotReady member too) stays out of this test.
	recreateMember(t, ns, 2, "r2", false)
	setEtcdContainerWaiting(t, ns, "etcd-main-2", "ImagePullBackOff")

	serving := podUIDs(g, ns, 0, 1)
	g.Eventually(func(g Gomega) {
		events := etcdEvents(g, ns, etcdcontroller.EventReasonMemberPodUpdateHeld)
		g.Expect(events).NotTo(BeEmpty())
		g.Expect(events[0].Message).To(ContainSubstring("etcd-main-2"))
		g.Expect(events[0].Message).To(ContainSubstring("ImagePullBackOff"))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Consistently(func(g Gomega) { g.Expect(podUIDs(g, ns, 0, 1)).To(Equal(serving)) }).
		WithTimeout(2*time.Second).WithPolling(200*time.Millisecond).Should(Succeed(), "the bad revision spreads no further")

	changeImage(t, ns, "example.org/etcd-wrapper:v2")
	g.Eventually(func(g Gomega) string { return statefulSet(g, ns).Spec.Template.Spec.Containers[0].Image }).
		WithTimeout(timeout).WithPolling(poll).Should(Equal("example.org/etcd-wrapper:v2"))
	setUpdateRevision(t, ns, "r3")
	expectReplaced(t, ns, 2, serving)
	expectUpdateEvent(t, ns, "etcd-main-2", "ImagePullBackOff")
}

// The quorum guard: a serving member is not replaced when the members that keep serving would be fewer
// than the quorum. Member 2's pod is not Ready and carries no revision label (druid cannot tell whether it
// runs the update, so it does not replace it), while its lease is renewed (so the heal flow leaves it
// alone): replacing member 0 or 1 would leave one serving member of three.
func TestPodUpdateHeldWhileAReplacementWouldLoseTheQuorum(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	healthyCluster(t, ns, 3)
	runRevision(t, ns, "r1", 0, 1)
	setPodReady(t, ns, "etcd-main-2", false)
	serving := podUIDs(g, ns, 0, 1, 2)

	changeImage(t, ns, "example.org/etcd-wrapper:v2")
	g.Eventually(func(g Gomega) string { return statefulSet(g, ns).Spec.Template.Spec.Containers[0].Image }).
		WithTimeout(timeout).WithPolling(poll).Should(Equal("example.org/etcd-wrapper:v2"))
	setUpdateRevision(t, ns, "r2")

	g.Eventually(func(g Gomega) {
		events := etcdEvents(g, ns, etcdcontroller.EventReasonMemberPodUpdateHeld)
		g.Expect(events).NotTo(BeEmpty())
		g.Expect(events[0].Message).To(ContainSubstring("quorum"))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Consistently(func(g Gomega) { g.Expect(podUIDs(g, ns, 0, 1, 2)).To(Equal(serving)) }).
		WithTimeout(2 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())
	g.Expect(etcdEvents(g, ns, etcdcontroller.EventReasonMemberPodUpdated)).To(BeEmpty())

	setPodReady(t, ns, "etcd-main-2", true)
	expectReplaced(t, ns, 1, podUIDs(g, ns, 0, 2))
}

func leaderHolder(i int) string { return fmt.Sprintf("%016x:cdf818194e3a8c32:Leader", i+1) }

func changeImage(t *testing.T, ns, image string) {
	t.Helper()
	updateEtcd(t, ns, func(e *druidv1alpha1.Etcd) {
		e.Spec.Etcd.Image = ptr.To(image)
		e.Annotations = map[string]string{druidv1alpha1.GardenerOperationAnnotation: druidv1alpha1.OperationReconcile}
	})
}

// runRevision labels the pods of the ordinals with revision and makes it the StatefulSet's update revision,
// as the StatefulSet controller does.
func runRevision(t *testing.T, ns, revision string, ordinals ...int) {
	t.Helper()
	for _, i := range ordinals {
		NewWithT(t).Eventually(func(g Gomega) {
			pod := &corev1.Pod{}
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: fmt.Sprintf("%s-%d", etcdName, i)}, pod)).To(Succeed())
			pod.Labels[appsv1.ControllerRevisionHashLabelKey] = revision
			g.Expect(env.Client.Update(ctx, pod)).To(Succeed())
		}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	}
	setUpdateRevision(t, ns, revision)
}

// setUpdateRevision writes the StatefulSet status of a controller that observed the current generation and
// computed revision as its update revision.
func setUpdateRevision(t *testing.T, ns, revision string) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		sts := statefulSet(g, ns)
		n := ptr.Deref(sts.Spec.Replicas, 1)
		sts.Status = appsv1.StatefulSetStatus{ObservedGeneration: sts.Generation, Replicas: n, ReadyReplicas: n,
			CurrentReplicas: n, AvailableReplicas: n, CurrentRevision: sts.Status.CurrentRevision, UpdateRevision: revision}
		g.Expect(env.Client.Status().Update(ctx, sts)).To(Succeed())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}

// setEtcdContainerWaiting reports the pod's etcd container as waiting for reason (CrashLoopBackOff,
// ImagePullBackOff, …), as the kubelet does.
func setEtcdContainerWaiting(t *testing.T, ns, name, reason string) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		pod := &corev1.Pod{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pod)).To(Succeed())
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "etcd", Image: pod.Spec.Containers[0].Image,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}}}
		g.Expect(env.Client.Status().Update(ctx, pod)).To(Succeed())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}

// recreateMember creates the pod of ordinal again with revision, as the StatefulSet controller does after a
// deletion, and sets its readiness.
func recreateMember(t *testing.T, ns string, ordinal int, revision string, ready bool) {
	t.Helper()
	g := NewWithT(t)
	var pod *corev1.Pod
	g.Eventually(func(g Gomega) { pod = memberPod(g, ns, ordinal) }).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	pod.Labels[appsv1.ControllerRevisionHashLabelKey] = revision
	g.Expect(env.Client.Create(ctx, pod)).To(Succeed())
	setPodReady(t, ns, pod.Name, ready)
}

// expectReplaced waits until druid deleted the pod of ordinal, and checks that the pods of others (name →
// UID) are still the same.
func expectReplaced(t *testing.T, ns string, ordinal int, others map[string]types.UID) {
	t.Helper()
	g := NewWithT(t)
	name := fmt.Sprintf("%s-%d", etcdName, ordinal)
	g.Eventually(exists(ns, name, &corev1.Pod{})).WithTimeout(timeout).WithPolling(poll).Should(Satisfy(isNotFound), name)
	for other, uid := range others {
		g.Expect(podUID(g, ns, other)).To(Equal(uid), "%s must not be replaced together with %s", other, name)
	}
}

// expectUpdateEvent waits for a MemberPodUpdated event naming the pod, whose message says why with why.
func expectUpdateEvent(t *testing.T, ns, pod, why string) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		var messages []string
		for _, e := range etcdEvents(g, ns, etcdcontroller.EventReasonMemberPodUpdated) {
			messages = append(messages, e.Message)
		}
		g.Expect(messages).To(ContainElement(And(ContainSubstring("pod "+pod+" "), ContainSubstring(why))))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}

// podUIDs are the UIDs of the pods of the ordinals, by pod name.
func podUIDs(g Gomega, ns string, ordinals ...int) map[string]types.UID {
	uids := map[string]types.UID{}
	for _, i := range ordinals {
		name := fmt.Sprintf("%s-%d", etcdName, i)
		uids[name] = podUID(g, ns, name)
	}
	return uids
}
