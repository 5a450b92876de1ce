package decide

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/heartbeat"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/health"
)

// unschedulable makes the pod of ordinal i, created age before now, Pending without a node: the
// scheduler found no node for it (e.g. a volume node affinity conflict).
func (c *cluster) unschedulable(i int, age time.Duration) *cluster {
	c.pod(i, false, age)
	pod := c.pods[druidv1alpha1.PodName(c.etcd, i)]
	pod.Status.Phase = corev1.PodPending
	pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable"})
	return c
}

// onNode binds the pod of ordinal i to a node.
func (c *cluster) onNode(i int, node string) *cluster {
	c.pods[druidv1alpha1.PodName(c.etcd, i)].Spec.NodeName = node
	return c
}

// relocationCondition stores the MemberRelocation condition as a heal run would have written it.
func (c *cluster) relocationCondition(s druidv1alpha1.ConditionStatus, reason, member string) *cluster {
	c.etcd.Status.Conditions = health.SetCondition(c.etcd.Status.Conditions, druidv1alpha1.Condition{Type: ConditionTypeMemberRelocation,
		Status: s, Reason: reason, Message: member + ": test"}, ago(time.Minute))
	return c
}

// TestDecideMemberRelocation is case 14 of the decision table: which member Decide names for relocation,
// and when it holds the relocation back. (Whether the volume is unreachable is JudgeRelocation's.)
// Grace periods: Unknown 1 m, NotReady 5 m; replacement pods younger than 5 m are left alone by case 9.
func TestDecideMemberRelocation(t *testing.T) {
	lost := func(replicas int32, ordinals ...int) *cluster {
		c := newCluster(replicas)
		for _, i := range ordinals {
			c.renew(i, ago(20*time.Minute)).unschedulable(i, time.Minute)
		}
		return c.settle(ago(10 * time.Minute))
	}
	rows := []struct {
		name    string
		cluster func() *cluster
		actions []string
	}{
		{name: "one of 3 lost, its pod unschedulable: relocate it",
			cluster: func() *cluster { return lost(3, 2) },
			actions: []string{"14 RelocateMember etcd-main-2"}},
		{name: "one of 3 lost, its pod stuck on a node (the action checks the node)",
			cluster: func() *cluster { return lost(3, 2).pod(2, false, time.Minute).onNode(2, "node-c") },
			actions: []string{"14 RelocateMember etcd-main-2"}},
		{name: "one of 3 lost, no pod: relocate it",
			cluster: func() *cluster {
				c := lost(3, 2)
				delete(c.pods, druidv1alpha1.PodName(c.etcd, 2))
				return c
			},
			actions: []string{"14 RelocateMember etcd-main-2"}},
		{name: "pod Pending but not (yet) found unschedulable: nothing",
			cluster: func() *cluster {
				c := lost(3, 2).pod(2, false, time.Minute)
				c.pods[druidv1alpha1.PodName(c.etcd, 2)].Status.Phase = corev1.PodPending
				return c
			},
			actions: []string{}},
		{name: "NotReady, not yet past the grace period: nothing",
			cluster: func() *cluster {
				return newCluster(3).renew(2, ago(4*time.Minute)).unschedulable(2, time.Minute).settle(now)
			},
			actions: []string{}},
		{name: "pod NotReady but its etcd container Ready: may serve, nothing",
			cluster: func() *cluster {
				return lost(3, 2).pod(2, false, time.Minute).onNode(2, "node-c").etcdContainerReady(2)
			},
			actions: []string{}},
		{name: "two of 5 lost: the lower ordinal first, one at a time",
			cluster: func() *cluster { return lost(5, 3, 4) },
			actions: []string{"14 RelocateMember etcd-main-3"}},
		{name: "the other lost member of 5 waits while one is relocating",
			cluster: func() *cluster {
				return lost(5, 3, 4).relocationCondition(druidv1alpha1.ConditionTrue, ReasonMemberRelocating, "etcd-main-4")
			},
			actions: []string{"14 RelocationHeld etcd-main-3"}},
		{name: "the lease lists data dirs moved aside on the volume: held",
			cluster: func() *cluster {
				c := lost(3, 2)
				c.lease(2).Annotations = map[string]string{MovedAsideAnnotation: "/var/etcd/data/new.etcd.invalid-20250301T000000Z"}
				return c
			},
			actions: []string{"14 RelocationHeld etcd-main-2"}},
		{name: "the relocating member itself may be relocated again",
			cluster: func() *cluster {
				return lost(3, 2).relocationCondition(druidv1alpha1.ConditionTrue, ReasonMemberRelocating, "etcd-main-2")
			},
			actions: []string{"14 RelocateMember etcd-main-2"}},
		{name: "the relocating member is Ready: relocated",
			cluster: func() *cluster {
				return newCluster(3).settle(now).relocationCondition(druidv1alpha1.ConditionTrue, ReasonMemberRelocating, "etcd-main-2")
			},
			actions: []string{"14 MemberRelocated etcd-main-2"}},
		{name: "relocated condition stays, nothing else to do",
			cluster: func() *cluster {
				return newCluster(3).settle(now).relocationCondition(druidv1alpha1.ConditionFalse, ReasonMemberRelocated, "etcd-main-2")
			},
			actions: []string{}},
		{name: "quorum rests on an Unknown member: held",
			cluster: func() *cluster { return lost(3, 2).renew(1, ago(90*time.Second)) },
			actions: []string{"2 WriteStatus etcd-main-1", "14 RelocationHeld etcd-main-2"}},
		{name: "single member: held, never relocated (quorum loss is case 10's)",
			cluster: func() *cluster { return lost(1, 0) },
			actions: []string{"14 RelocationHeld etcd-main-0", "10 ManualInterventionRequired etcd-main-0"}},
		{name: "two of 3 lost: held, the quorum-loss recovery is case 10's",
			cluster: func() *cluster { return lost(3, 1, 2).withStore() },
			actions: []string{"14 RelocationHeld etcd-main-1", "10 StartQuorumRecovery etcd-main-1,etcd-main-2"}},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			NewWithT(t).Expect(summary(Decide(row.cluster().input()))).To(Equal(row.actions))
		})
	}
}

func TestRelocationHeldSaysWhy(t *testing.T) {
	g := NewWithT(t)
	single := Decide(newCluster(1).renew(0, ago(20*time.Minute)).unschedulable(0, time.Minute).settle(ago(10 * time.Minute)).input())
	g.Expect(single[0].Message).To(ContainSubstring("single-member cluster's only copy of the data"))
	busy := newCluster(5).renew(3, ago(20*time.Minute)).unschedulable(3, time.Minute).renew(4, ago(20*time.Minute)).unschedulable(4, time.Minute).
		settle(ago(10*time.Minute)).relocationCondition(druidv1alpha1.ConditionTrue, ReasonMemberRelocating, "etcd-main-4")
	g.Expect(Decide(busy.input())[0].Message).To(Equal("etcd-main-4 is being relocated; one member at a time"))
}

// The sidecar writes the moved-aside list under the key druid reads.
func TestMovedAsideAnnotationIsTheSidecars(t *testing.T) {
	NewWithT(t).Expect(MovedAsideAnnotation).To(Equal(heartbeat.AnnotationMovedAside))
}

func TestRelocatingMemberReadsTheCondition(t *testing.T) {
	g := NewWithT(t)
	c := newCluster(3).settle(now)
	g.Expect(RelocatingMember(c.etcd.Status)).To(BeEmpty())
	c.relocationCondition(druidv1alpha1.ConditionFalse, ReasonMemberRelocationHeld, "etcd-main-1")
	g.Expect(RelocatingMember(c.etcd.Status)).To(BeEmpty())
	c.relocationCondition(druidv1alpha1.ConditionTrue, ReasonMemberRelocating, "etcd-main-1")
	g.Expect(RelocatingMember(c.etcd.Status)).To(Equal("etcd-main-1"))
}

// TestJudgeRelocation is the volume half of case 14: on what the apiserver stores, is the candidate's
// volume unreachable, and must its pod be force-deleted? Unreachable grace 10 m.
func TestJudgeRelocation(t *testing.T) {
	const grace = 10 * time.Minute
	node := func(name string, zone string) corev1.Node {
		return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name, corev1.LabelTopologyZone: zone}},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	}
	unreachable := func(n corev1.Node, since time.Duration) corev1.Node {
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, LastTransitionTime: metav1.NewTime(ago(since))}}
		n.Spec.Taints = []corev1.Taint{{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute, TimeAdded: &metav1.Time{Time: ago(since)}}}
		return n
	}
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main-etcd-main-2"}, Spec: corev1.PersistentVolumeClaimSpec{VolumeName: "pv-2"}}
	pinned := func(key, value string) *corev1.PersistentVolume {
		return &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-2"}, Spec: corev1.PersistentVolumeSpec{NodeAffinity: &corev1.VolumeNodeAffinity{
			Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
				{Key: key, Operator: corev1.NodeSelectorOpIn, Values: []string{value}}}}}}}}}
	}
	onNodeC := pinned(corev1.LabelHostname, "node-c")
	pending := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main-2"}}
	bound := func(node string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main-2"}, Spec: corev1.PodSpec{NodeName: node}}
	}
	live := []corev1.Node{node("node-a", "z1"), node("node-b", "z2"), node("node-d", "z3")}
	rows := []struct {
		name        string
		p           Placement
		unreachable bool
		force       bool
	}{
		{name: "node gone, pod Pending: relocate", p: Placement{Claim: claim, Volume: onNodeC, Pod: pending, Nodes: live}, unreachable: true},
		{name: "node gone, no pod: relocate", p: Placement{Claim: claim, Volume: onNodeC, Nodes: live}, unreachable: true},
		{name: "node gone, pod still bound to it: relocate, force-delete the pod",
			p: Placement{Claim: claim, Volume: onNodeC, Pod: bound("node-c"), Nodes: live}, unreachable: true, force: true},
		{name: "node there and Ready: keep", p: Placement{Claim: claim, Volume: onNodeC, Pod: pending, Nodes: append(live, node("node-c", "z3"))}},
		{name: "node unreachable past the grace period: relocate, force-delete its pod",
			p: Placement{Claim: claim, Volume: onNodeC, Pod: bound("node-c"), Nodes: append(live, unreachable(node("node-c", "z3"), 11*time.Minute))}, unreachable: true, force: true},
		{name: "node unreachable within the grace period: keep",
			p: Placement{Claim: claim, Volume: onNodeC, Pod: bound("node-c"), Nodes: append(live, unreachable(node("node-c", "z3"), 9*time.Minute))}},
		{name: "node NotReady without the unreachable taint (kubelet reports): keep",
			p: Placement{Claim: claim, Volume: onNodeC, Nodes: append(live, func() corev1.Node {
				n := node("node-c", "z3")
				n.Status.Conditions[0].Status = corev1.ConditionFalse
				return n
			}())}},
		{name: "volume gone, pod bound to a live node: case 9's",
			p: Placement{Claim: claim, Volume: onNodeC, Pod: bound("node-a"), Nodes: live}},
		{name: "zone lost: no node left in the volume's zone", p: Placement{Claim: claim, Volume: pinned(corev1.LabelTopologyZone, "z4"), Pod: pending, Nodes: live}, unreachable: true},
		{name: "zone has a live node: keep", p: Placement{Claim: claim, Volume: pinned(corev1.LabelTopologyZone, "z3"), Pod: pending, Nodes: live}},
		{name: "volume without node affinity (attachable anywhere): keep",
			p: Placement{Claim: claim, Volume: &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-2"}}, Pod: pending, Nodes: live}},
		{name: "claim not bound: keep", p: Placement{Claim: &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, Nodes: live}},
		{name: "claim bound, volume not found: keep", p: Placement{Claim: claim, Nodes: live}},
		{name: "claim being deleted (relocation under way): keep",
			p: Placement{Claim: &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c", DeletionTimestamp: &metav1.Time{Time: now}},
				Spec: corev1.PersistentVolumeClaimSpec{VolumeName: "pv-2"}}, Volume: onNodeC, Nodes: live}},
		{name: "no claim: keep", p: Placement{Nodes: live}},
		{name: "node affinity with an operator druid does not judge: keep",
			p: Placement{Claim: claim, Volume: func() *corev1.PersistentVolume {
				pv := pinned("example.com/size", "3")
				pv.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0].Operator = corev1.NodeSelectorOpGt
				return pv
			}(), Pod: pending, Nodes: live}},
		{name: "node affinity by metadata.name, node gone: relocate",
			p: Placement{Claim: claim, Volume: &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-2"}, Spec: corev1.PersistentVolumeSpec{
				NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
					MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"node-c"}}}}}}}}},
				Pod: pending, Nodes: live}, unreachable: true},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			g := NewWithT(t)
			row.p.Now, row.p.UnreachableGrace = now, grace
			v := JudgeRelocation(row.p)
			g.Expect(v.Unreachable).To(Equal(row.unreachable), v.Why)
			g.Expect(v.ForceDeletePod).To(Equal(row.force), v.Why)
			g.Expect(v.Why).NotTo(BeEmpty())
		})
	}
}
