package etcdcontroller_test

import (
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/heal"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/heal/decide"
	"github.com/gardener-etcd/gardener-etcd/test/support/gardenlet"
)

// placedVolumes gives each ordinal of replicas a claim bound to a local-looking PersistentVolume pinned
// to node <ns>-node-<i>, as a local-storage provisioner leaves them; the Nodes of the ordinals in live
// exist (Ready), the others do not.
func placedVolumes(t *testing.T, ns string, replicas int, live ...int) {
	t.Helper()
	for _, i := range live {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName(ns, i), Labels: map[string]string{corev1.LabelHostname: nodeName(ns, i)}}}
		if err := env.Client.Create(ctx, node); err != nil {
			t.Fatalf("creating node: %v", err)
		}
		t.Cleanup(func() { _ = env.Client.Delete(ctx, node) })
		node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
		if err := env.Client.Status().Update(ctx, node); err != nil {
			t.Fatalf("setting node status: %v", err)
		}
	}
	for i := 0; i < replicas; i++ {
		pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-pv-%d", ns, i)}, Spec: corev1.PersistentVolumeSpec{
			Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeSource: corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: "/data"}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{nodeName(ns, i)}}}}}}},
		}}
		if err := env.Client.Create(ctx, pv); err != nil {
			t.Fatalf("creating volume: %v", err)
		}
		t.Cleanup(func() { _ = env.Client.Delete(ctx, pv) })
		pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: memberClaim(i), Namespace: ns}, Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, VolumeName: pv.Name,
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		}}
		if err := env.Client.Create(ctx, pvc); err != nil {
			t.Fatalf("creating claim: %v", err)
		}
	}
}

func nodeName(ns string, i int) string { return fmt.Sprintf("%s-node-%d", ns, i) }

// memberClaim is the StatefulSet's claim of an ordinal (<claim template>-<statefulset>-<ordinal>).
func memberClaim(i int) string { return fmt.Sprintf("%s-%s-%d", etcdName, etcdName, i) }

// loseMember stops the sidecar of ordinal i and replaces its pod with one the scheduler found no node
// for, as after the node with its volume was deleted: Pending, PodScheduled False/Unschedulable.
func loseMember(t *testing.T, ns string, s *sidecars, i int) {
	t.Helper()
	name := fmt.Sprintf("%s-%d", etcdName, i)
	s.stop(name)
	g := NewWithT(t)
	deletePods(t, ns, name)
	g.Eventually(exists(ns, name, &corev1.Pod{})).WithTimeout(timeout).WithPolling(poll).Should(Satisfy(isNotFound))
	g.Eventually(func(g Gomega) {
		pod := &corev1.Pod{}
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pod)
		if apierrors.IsNotFound(err) {
			pod = memberPod(g, ns, i)
			g.Expect(env.Client.Create(ctx, pod)).To(Succeed())
		} else {
			g.Expect(err).NotTo(HaveOccurred())
		}
		pod.Status.Phase = corev1.PodPending
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
			Message: "0/2 nodes are available: 2 node(s) had volume node affinity conflict.", LastTransitionTime: metav1.Now()}}
		g.Expect(env.Client.Status().Update(ctx, pod)).To(Succeed())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}

func relocationCondition(g Gomega, ns string) *druidv1alpha1.Condition {
	return druidv1alpha1.FindCondition(getEtcd(g, ns).Status.Conditions, decide.ConditionTypeMemberRelocation)
}

// Case 14: one of three members' node is gone (its Node object deleted) and its volume is pinned to that
// node, so the member's pod stays unschedulable. Druid deletes exactly that member's claim and pod (the
// others' stay), says so in the MemberRelocation condition (True/MemberRelocating) and a Warning event;
// once the replacement (new claim, new pod, new member ID) is Ready, the condition turns
// False/MemberRelocated with a Normal event.
func TestMemberWhoseNodeIsGoneIsRelocated(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	s := healthyCluster(t, ns, 3)
	placedVolumes(t, ns, 3, 0, 1)
	kept := map[string]types.UID{"etcd-main-0": podUID(g, ns, "etcd-main-0"), "etcd-main-1": podUID(g, ns, "etcd-main-1")}

	loseMember(t, ns, s, 2)
	g.Eventually(func(g Gomega) {
		g.Expect(claim(g, ns, memberClaim(2)).DeletionTimestamp).NotTo(BeNil(), "claim of the lost member deleted")
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	c := expectCondition(t, ns, decide.ConditionTypeMemberRelocation, druidv1alpha1.ConditionTrue, decide.ReasonMemberRelocating)
	g.Expect(druidv1alpha1.FindCondition(c.Status.Conditions, decide.ConditionTypeMemberRelocation).Message).
		To(And(HavePrefix("etcd-main-2: "), ContainSubstring(nodeName(ns, 2))))
	g.Eventually(func(g Gomega) {
		events := etcdEvents(g, ns, decide.ReasonMemberRelocating)
		g.Expect(events).To(HaveLen(1))
		g.Expect(events[0].Type).To(Equal(corev1.EventTypeWarning))
		g.Expect(events[0].Message).To(ContainSubstring(memberClaim(2)))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	for i := 0; i < 2; i++ {
		g.Expect(claim(g, ns, memberClaim(i)).DeletionTimestamp).To(BeNil(), "claim %d kept", i)
	}
	for name, uid := range kept {
		g.Expect(podUID(g, ns, name)).To(Equal(uid), name)
	}

	// The volume protection lets the claim go (no pod uses it); the StatefulSet creates a new claim and pod,
	// and the new member joins with a new ID.
	releaseClaims(t, ns, memberClaim(2))
	recoverPod(t, ns, 2)
	s.resume("etcd-main-2", fmt.Sprintf("%016x:cdf818194e3a8c32:Member", 42))
	expectCondition(t, ns, decide.ConditionTypeMemberRelocation, druidv1alpha1.ConditionFalse, decide.ReasonMemberRelocated)
	expectCondition(t, ns, druidv1alpha1.ConditionTypeAllMembersReady, druidv1alpha1.ConditionTrue, druidv1alpha1.ReasonAllMembersReady)
	g.Eventually(func(g Gomega) {
		g.Expect(etcdEvents(g, ns, decide.ReasonMemberRelocated)).To(HaveLen(1))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Expect(etcdEvents(g, ns, decide.ReasonMemberRelocating)).To(HaveLen(1), "relocated once")
}

// A pod bound to the deleted node is never confirmed gone by a kubelet: a graceful deletion (case 9's)
// leaves it terminating for ever, and the StatefulSet would not create its replacement. Druid deletes it
// without a grace period after the claim.
func TestPodBoundToTheLostNodeIsForceDeleted(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	s := healthyCluster(t, ns, 3)
	placedVolumes(t, ns, 3, 0, 1)
	uid := podUID(g, ns, "etcd-main-2")
	s.stop("etcd-main-2")
	deletePods(t, ns, "etcd-main-2")
	g.Eventually(exists(ns, "etcd-main-2", &corev1.Pod{})).WithTimeout(timeout).WithPolling(poll).Should(Satisfy(isNotFound))
	pod := memberPod(g, ns, 2)
	pod.Spec.NodeName = nodeName(ns, 2) // scheduled there before the node went
	g.Expect(env.Client.Create(ctx, pod)).To(Succeed())
	setPodReady(t, ns, pod.Name, false)
	bound := podUID(g, ns, "etcd-main-2")
	g.Expect(bound).NotTo(Equal(uid))

	g.Eventually(func(g Gomega) {
		g.Expect(claim(g, ns, memberClaim(2)).DeletionTimestamp).NotTo(BeNil())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	// Only a deletion without a grace period removes a pod bound to a node at once (no kubelet here).
	g.Eventually(exists(ns, "etcd-main-2", &corev1.Pod{})).WithTimeout(timeout).WithPolling(poll).Should(Satisfy(isNotFound))
	g.Eventually(func(g Gomega) {
		events := etcdEvents(g, ns, decide.ReasonMemberRelocating)
		g.Expect(events).To(HaveLen(1))
		g.Expect(events[0].Message).To(ContainSubstring("forced: its node is lost"))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}

// A member whose node is still there is case 9's (its pod is restarted), never relocated: its volume keeps
// the data.
func TestMemberOnALiveNodeIsNotRelocated(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	s := healthyCluster(t, ns, 3)
	placedVolumes(t, ns, 3, 0, 1, 2)

	loseMember(t, ns, s, 2)
	// Case 9 deleting the pod shows the member was judged past the grace period, in the same run as case 14.
	g.Eventually(func(g Gomega) {
		g.Expect(etcdEvents(g, ns, heal.EventReasonMemberPodDeleted)).NotTo(BeEmpty())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Expect(claim(g, ns, memberClaim(2)).DeletionTimestamp).To(BeNil())
	g.Expect(relocationCondition(g, ns)).To(BeNil())
	g.Expect(etcdEvents(g, ns, decide.ReasonMemberRelocating)).To(BeEmpty())
}

// A single-member cluster's volume may hold its only copy of the data: druid never relocates it, it says
// so (MemberRelocation False/MemberRelocationHeld, a Warning event) and deletes no claim.
func TestSingleMemberWhoseNodeIsGoneIsHeld(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	s := healthyCluster(t, ns, 1)
	placedVolumes(t, ns, 1)

	loseMember(t, ns, s, 0)
	etcd := expectCondition(t, ns, decide.ConditionTypeMemberRelocation, druidv1alpha1.ConditionFalse, decide.ReasonMemberRelocationHeld)
	g.Expect(druidv1alpha1.FindCondition(etcd.Status.Conditions, decide.ConditionTypeMemberRelocation).Message).
		To(And(HavePrefix("etcd-main-0: "), ContainSubstring("single-member")))
	g.Eventually(func(g Gomega) {
		g.Expect(warningEvents(g, ns, decide.ReasonMemberRelocationHeld)).To(HaveLen(1))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Expect(claim(g, ns, memberClaim(0)).DeletionTimestamp).To(BeNil())
}

// Under gardenlet's ClusterRole (no `delete persistentvolumeclaims`, no reads of PersistentVolumes and
// Nodes) druid relocates nothing: MemberRelocation False/PermissionsMissing names the permissions; once
// they are granted, the running druid relocates the member.
func TestMemberRelocationUnderGardenletsRoleDeletesNothing(t *testing.T) {
	g := NewWithT(t)
	druidNS := restartDruidUnderGardenletsRole(t)

	ns := env.CreateNamespace(t)
	s := healthyCluster(t, ns, 3)
	placedVolumes(t, ns, 3, 0, 1)
	loseMember(t, ns, s, 2)
	etcd := expectCondition(t, ns, decide.ConditionTypeMemberRelocation, druidv1alpha1.ConditionFalse, decide.ReasonRelocationPermissionsMissing)
	g.Expect(druidv1alpha1.FindCondition(etcd.Status.Conditions, decide.ConditionTypeMemberRelocation).Message).
		To(And(ContainSubstring("get persistentvolumes"), ContainSubstring("list nodes"), ContainSubstring("delete persistentvolumeclaims")))
	g.Eventually(func(g Gomega) {
		g.Expect(warningEvents(g, ns, decide.ReasonRelocationPermissionsMissing)).NotTo(BeEmpty())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Expect(claim(g, ns, memberClaim(2)).DeletionTimestamp).To(BeNil())

	grantRelocation(t, druidNS)
	g.Eventually(func(g Gomega) {
		g.Expect(claim(g, ns, memberClaim(2)).DeletionTimestamp).NotTo(BeNil())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	expectCondition(t, ns, decide.ConditionTypeMemberRelocation, druidv1alpha1.ConditionTrue, decide.ReasonMemberRelocating)
}

// grantRelocation binds the extra ClusterRole docs/gardenlet.md lists for the member relocation to the
// druid service account gardenlet's role runs as.
func grantRelocation(t *testing.T, druidNS string) {
	t.Helper()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "druid-relocation-" + druidNS}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"persistentvolumeclaims"}, Verbs: []string{"delete"}},
		{APIGroups: []string{""}, Resources: []string{"persistentvolumes"}, Verbs: []string{"get"}},
		{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"list"}}}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: gardenlet.DruidServiceAccount, Namespace: druidNS}}}
	for _, obj := range []client.Object{role, binding} {
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = env.Client.Delete(ctx, obj) })
	}
}
