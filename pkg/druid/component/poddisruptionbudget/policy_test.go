package poddisruptionbudget

import (
	"testing"

	. "github.com/onsi/gomega"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

func etcdWith(replicas int32, conditions map[druidv1alpha1.ConditionType]druidv1alpha1.ConditionStatus, ready, notReady int) *druidv1alpha1.Etcd {
	e := &druidv1alpha1.Etcd{}
	e.Spec.Replicas = replicas
	for t, s := range conditions {
		e.Status.Conditions = append(e.Status.Conditions, druidv1alpha1.Condition{Type: t, Status: s})
	}
	for i := 0; i < ready; i++ {
		e.Status.Members = append(e.Status.Members, druidv1alpha1.EtcdMemberStatus{Status: druidv1alpha1.EtcdMemberStatusReady})
	}
	for i := 0; i < notReady; i++ {
		e.Status.Members = append(e.Status.Members, druidv1alpha1.EtcdMemberStatus{Status: druidv1alpha1.EtcdMemberStatusNotReady})
	}
	return e
}

func TestQuorumPolicy(t *testing.T) {
	g := NewWithT(t)
	// Even counts (accepted as in upstream etcd-druid) need a majority too: 2 of 2, 3 of 4.
	for replicas, want := range map[int32]int32{0: 0, 1: 0, 2: 2, 3: 2, 4: 3, 5: 3, 7: 4} {
		g.Expect(QuorumPolicy(etcdWith(replicas, nil, 0, 0))).To(Equal(want), "replicas %d", replicas)
	}
}

// While a scale-in to one keeps three members running until they left the membership, the PDB
// protects the quorum of the three; hibernation protects nothing.
func TestQuorumPolicyCountsTheMembersAHeldScaleInKeeps(t *testing.T) {
	g := NewWithT(t)
	held := etcdWith(1, nil, 0, 0)
	held.Status.Replicas = 3
	g.Expect(QuorumPolicy(held)).To(Equal(int32(2)))
	g.Expect(DecisionTablePolicy(held)).To(Equal(int32(2)))
	hibernating := etcdWith(0, nil, 0, 0)
	hibernating.Status.Replicas = 3
	g.Expect(QuorumPolicy(hibernating)).To(Equal(int32(0)))
	scalingUp := etcdWith(3, nil, 0, 0)
	scalingUp.Status.Replicas = 1
	g.Expect(QuorumPolicy(scalingUp)).To(Equal(int32(2)))
}

func TestDecisionTablePolicy(t *testing.T) {
	const (
		allReady = druidv1alpha1.ConditionTypeAllMembersReady
		backup   = druidv1alpha1.ConditionTypeBackupReady
		isTrue   = druidv1alpha1.ConditionTrue
		isFalse  = druidv1alpha1.ConditionFalse
	)
	cases := []struct {
		name     string
		etcd     *druidv1alpha1.Etcd
		expected int32
	}{
		{"healthy 5 members: quorum", etcdWith(5, map[druidv1alpha1.ConditionType]druidv1alpha1.ConditionStatus{allReady: isTrue, backup: isTrue}, 5, 0), 3},
		{"no conditions yet: quorum", etcdWith(5, nil, 0, 0), 3},
		{"5 members, 4 ready, not all ready: ready count", etcdWith(5, map[druidv1alpha1.ConditionType]druidv1alpha1.ConditionStatus{allReady: isFalse}, 4, 1), 4},
		{"5 members, 2 ready: never below quorum", etcdWith(5, map[druidv1alpha1.ConditionType]druidv1alpha1.ConditionStatus{allReady: isFalse}, 2, 3), 3},
		{"backup failing: all replicas", etcdWith(3, map[druidv1alpha1.ConditionType]druidv1alpha1.ConditionStatus{allReady: isTrue, backup: isFalse}, 3, 0), 3},
		{"single node with failing backup: 0", etcdWith(1, map[druidv1alpha1.ConditionType]druidv1alpha1.ConditionStatus{backup: isFalse}, 1, 0), 0},
		{"waking up: statuses kept NotChecked from before the hibernation judge nothing", notChecked(etcdWith(3, map[druidv1alpha1.ConditionType]druidv1alpha1.ConditionStatus{allReady: isFalse, backup: isFalse}, 0, 0)), 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			NewWithT(t).Expect(DecisionTablePolicy(c.etcd)).To(Equal(c.expected))
		})
	}
}

func notChecked(e *druidv1alpha1.Etcd) *druidv1alpha1.Etcd {
	for i := range e.Status.Conditions {
		e.Status.Conditions[i].Reason = druidv1alpha1.ReasonNotChecked
	}
	return e
}
