package health

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

const (
	ready    = druidv1alpha1.EtcdMemberStatusReady
	notReady = druidv1alpha1.EtcdMemberStatusNotReady
	unknown  = druidv1alpha1.EtcdMemberStatusUnknown
)

func members(statuses ...druidv1alpha1.EtcdMemberConditionStatus) []druidv1alpha1.EtcdMemberStatus {
	out := make([]druidv1alpha1.EtcdMemberStatus, 0, len(statuses))
	for i, s := range statuses {
		out = append(out, member(druidv1alpha1.PodName(testEtcd(3), i), s))
	}
	return out
}

func TestReadyCondition(t *testing.T) {
	for name, tc := range map[string]struct {
		members    []druidv1alpha1.EtcdMemberStatus
		size       int32
		wantStatus druidv1alpha1.ConditionStatus
		wantReason string
	}{
		"no members":              {size: 3, wantStatus: "Unknown", wantReason: "NoMembersInStatus"},
		"all ready":               {members: members(ready, ready, ready), size: 3, wantStatus: "True", wantReason: "Quorate"},
		"minority not ready":      {members: members(ready, notReady, ready), size: 3, wantStatus: "True", wantReason: "Quorate"},
		"unknown still counts":    {members: members(ready, unknown, notReady), size: 3, wantStatus: "True", wantReason: "Quorate"},
		"majority not ready":      {members: members(ready, notReady, notReady), size: 3, wantStatus: "False", wantReason: "QuorumLost"},
		"single member ready":     {members: members(ready), size: 1, wantStatus: "True", wantReason: "Quorate"},
		"single member not ready": {members: members(notReady), size: 1, wantStatus: "False", wantReason: "QuorumLost"},
		// A single member that does not lead is still in a larger membership without quorum.
		"single member leads":               {members: withRole(members(ready), druidv1alpha1.EtcdRoleLeader), size: 1, wantStatus: "True", wantReason: "Quorate"},
		"single member without a leader":    {members: withRole(members(ready), druidv1alpha1.EtcdRoleMember), size: 1, wantStatus: "False", wantReason: "QuorumLost"},
		"roles of larger clusters not used": {members: withRole(members(ready, ready, ready), druidv1alpha1.EtcdRoleMember), size: 3, wantStatus: "True", wantReason: "Quorate"},
		"one of three bootstrapped":         {members: members(ready), size: 3, wantStatus: "False", wantReason: "QuorumLost"},
		"two of five not ready":             {members: members(ready, ready, ready, notReady, notReady), size: 5, wantStatus: "True", wantReason: "Quorate"},
		"three of five not ready":           {members: members(ready, ready, notReady, notReady, notReady), size: 5, wantStatus: "False", wantReason: "QuorumLost"},
		// Even sizes: the majority of 2 is 2, of 4 is 3.
		"one of two not ready":  {members: members(ready, notReady), size: 2, wantStatus: "False", wantReason: "QuorumLost"},
		"one of four not ready": {members: members(ready, ready, ready, notReady), size: 4, wantStatus: "True", wantReason: "Quorate"},
		"two of four not ready": {members: members(ready, ready, notReady, notReady), size: 4, wantStatus: "False", wantReason: "QuorumLost"},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			c := ReadyCondition(tc.members, tc.size)
			g.Expect(c.Type).To(Equal(druidv1alpha1.ConditionTypeReady))
			g.Expect(c.Status).To(Equal(tc.wantStatus))
			g.Expect(c.Reason).To(Equal(tc.wantReason))
		})
	}
}

// withRole gives every member role, as its lease's holderIdentity would.
func withRole(ms []druidv1alpha1.EtcdMemberStatus, role druidv1alpha1.EtcdRole) []druidv1alpha1.EtcdMemberStatus {
	for i := range ms {
		ms[i].Role = &role
	}
	return ms
}

func TestAllMembersReadyCondition(t *testing.T) {
	for name, tc := range map[string]struct {
		members    []druidv1alpha1.EtcdMemberStatus
		replicas   int32
		wantStatus druidv1alpha1.ConditionStatus
		wantReason string
	}{
		"no members":         {replicas: 3, wantStatus: "Unknown", wantReason: "NoMembersInStatus"},
		"all ready":          {members: members(ready, ready, ready), replicas: 3, wantStatus: "True", wantReason: "AllMembersReady"},
		"one unknown":        {members: members(ready, unknown, ready), replicas: 3, wantStatus: "False", wantReason: "NotAllMembersReady"},
		"one not ready":      {members: members(ready, ready, notReady), replicas: 3, wantStatus: "False", wantReason: "NotAllMembersReady"},
		"fewer than desired": {members: members(ready), replicas: 3, wantStatus: "False", wantReason: "NotAllMembersReady"},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			c := AllMembersReadyCondition(tc.members, tc.replicas)
			g.Expect(c.Status).To(Equal(tc.wantStatus))
			g.Expect(c.Reason).To(Equal(tc.wantReason))
		})
	}
}

func TestAllMembersUpdatedCondition(t *testing.T) {
	sts := func(generation, observed int64, replicas, updated int32, updateRev, currentRev string) *appsv1.StatefulSet {
		return &appsv1.StatefulSet{
			ObjectMeta: metav1.ObjectMeta{Generation: generation},
			Spec:       appsv1.StatefulSetSpec{Replicas: ptr.To(replicas)},
			Status: appsv1.StatefulSetStatus{ObservedGeneration: observed, UpdatedReplicas: updated,
				UpdateRevision: updateRev, CurrentRevision: currentRev},
		}
	}
	for name, tc := range map[string]struct {
		sts        *appsv1.StatefulSet
		wantStatus druidv1alpha1.ConditionStatus
		wantReason string
	}{
		"missing":              {wantStatus: "Unknown", wantReason: "StatefulSetNotFound"},
		"rolled out":           {sts: sts(2, 2, 3, 3, "r2", "r2"), wantStatus: "True", wantReason: "AllMembersUpdated"},
		"generation not seen":  {sts: sts(3, 2, 3, 3, "r2", "r2"), wantStatus: "False", wantReason: "NotAllMembersUpdated"},
		"replicas not updated": {sts: sts(2, 2, 3, 2, "r2", "r2"), wantStatus: "False", wantReason: "NotAllMembersUpdated"},
		"revisions differ":     {sts: sts(2, 2, 3, 3, "r3", "r2"), wantStatus: "False", wantReason: "NotAllMembersUpdated"},
		// Before Kubernetes v1.37 the StatefulSet controller never moves currentRevision under OnDelete.
		"OnDelete, every replica updated": {sts: onDelete(sts(2, 2, 3, 3, "r3", "r2"), 3), wantStatus: "True", wantReason: "AllMembersUpdated"},
		"OnDelete, a replica not updated": {sts: onDelete(sts(2, 2, 3, 2, "r3", "r2"), 3), wantStatus: "False", wantReason: "NotAllMembersUpdated"},
		"OnDelete, a replica missing":     {sts: onDelete(sts(2, 2, 3, 3, "r3", "r2"), 2), wantStatus: "False", wantReason: "NotAllMembersUpdated"},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			c := AllMembersUpdatedCondition(tc.sts)
			g.Expect(c.Status).To(Equal(tc.wantStatus))
			g.Expect(c.Reason).To(Equal(tc.wantReason))
		})
	}
}

// onDelete is sts with updateStrategy OnDelete and replicas counted in its status.
func onDelete(sts *appsv1.StatefulSet, replicas int32) *appsv1.StatefulSet {
	sts.Spec.UpdateStrategy.Type = appsv1.OnDeleteStatefulSetStrategyType
	sts.Status.Replicas = replicas
	return sts
}

func TestDataVolumesReadyCondition(t *testing.T) {
	g := NewWithT(t)
	sts := rolledOutStatefulSet(3)
	c := DataVolumesReadyCondition(sts, nil)
	g.Expect(c.Status).To(Equal(druidv1alpha1.ConditionTrue))
	g.Expect(c.Reason).To(Equal("NoWarningsFoundForDataVolumes"))
	c = DataVolumesReadyCondition(nil, nil)
	g.Expect(c.Status).To(Equal(druidv1alpha1.ConditionUnknown), "no StatefulSet, no volumes to judge: upstream druid's Unknown")
	g.Expect(c.Reason).To(Equal("StatefulSetNotFound"))
	c = DataVolumesReadyCondition(sts, []string{"etcd-main-etcd-main-0: ProvisioningFailed: no storage class"})
	g.Expect(c.Status).To(Equal(druidv1alpha1.ConditionFalse))
	g.Expect(c.Reason).To(Equal("FoundWarningsForDataVolumes"))
	g.Expect(c.Message).To(ContainSubstring("ProvisioningFailed"))
}

func TestSetConditionKeepsTransitionTimeWhileStatusHolds(t *testing.T) {
	g := NewWithT(t)
	t0, t1, t2 := now, now.Add(time.Minute), now.Add(2*time.Minute)
	conds := SetCondition(nil, druidv1alpha1.Condition{Type: "Ready", Status: "True", Reason: "Quorate"}, t0)
	conds = SetCondition(conds, druidv1alpha1.Condition{Type: "Other", Status: "True"}, t0)
	conds = SetCondition(conds, druidv1alpha1.Condition{Type: "Ready", Status: "True", Reason: "Quorate", Message: "again"}, t1)
	g.Expect(conds).To(HaveLen(2))
	g.Expect(conds[0].LastTransitionTime.Time).To(Equal(t0))
	g.Expect(conds[0].LastUpdateTime.Time).To(Equal(t1))
	g.Expect(conds[0].Message).To(Equal("again"))
	conds = SetCondition(conds, druidv1alpha1.Condition{Type: "Ready", Status: "False", Reason: "QuorumLost"}, t2)
	g.Expect(conds[0].LastTransitionTime.Time).To(Equal(t2))
	g.Expect(RemoveCondition(conds, "Ready")).To(HaveLen(1))
	g.Expect(druidv1alpha1.FindCondition(conds, "Other")).NotTo(BeNil())
}
