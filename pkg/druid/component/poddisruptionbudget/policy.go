package poddisruptionbudget

import (
	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// MinAvailablePolicy computes the PDB's minAvailable for an Etcd. It is the hook through which the decision-table
// toggling (on AllMembersReady and BackupReady) plugs in without changing the operator.
type MinAvailablePolicy func(etcd *druidv1alpha1.Etcd) int32

// QuorumPolicy is the reference's rule: a majority (replicas/2+1) must stay available; a single-node or
// hibernated cluster gets 0, because blocking every eviction of its only pod would block node drains forever.
//
// The replicas counted are the members that run: spec.replicas, or more while a scale-in keeps the
// StatefulSet above it until the dropped members have left the etcd membership — those members
// still vote, so evicting them could cost the quorum the removal relies on.
func QuorumPolicy(etcd *druidv1alpha1.Etcd) int32 {
	replicas := runningReplicas(etcd)
	if replicas <= 1 {
		return 0
	}
	return replicas/2 + 1
}

// runningReplicas is spec.replicas, or the StatefulSet's replicas (status.replicas) when they are more and
// the Etcd is not hibernated.
func runningReplicas(etcd *druidv1alpha1.Etcd) int32 {
	if etcd.Spec.Replicas == 0 {
		return 0
	}
	return max(etcd.Spec.Replicas, etcd.Status.Replicas)
}

// DecisionTablePolicy raises QuorumPolicy's value as the heal decision table recommends, taking the highest applicable value:
//   - AllMembersReady False: the number of members whose status is Ready, so that no further member can be
//     evicted while the cluster is already degraded;
//   - BackupReady False: all replicas, so that no member is evicted while the latest data exists only in
//     etcd itself.
//
// Conditions that are missing, Unknown or NotChecked do not raise the value (druid does not know better
// than quorum).
func DecisionTablePolicy(etcd *druidv1alpha1.Etcd) int32 {
	minAvailable := QuorumPolicy(etcd)
	replicas := runningReplicas(etcd)
	if replicas <= 1 {
		return minAvailable
	}
	if conditionIs(etcd, druidv1alpha1.ConditionTypeAllMembersReady, druidv1alpha1.ConditionFalse) {
		minAvailable = max(minAvailable, readyMembers(etcd))
	}
	if conditionIs(etcd, druidv1alpha1.ConditionTypeBackupReady, druidv1alpha1.ConditionFalse) {
		minAvailable = max(minAvailable, replicas)
	}
	return minAvailable
}

// conditionIs tells whether condition t has status s; a NotChecked one (the status kept through a
// hibernation) has none, like a missing one.
func conditionIs(etcd *druidv1alpha1.Etcd, t druidv1alpha1.ConditionType, s druidv1alpha1.ConditionStatus) bool {
	for _, c := range etcd.Status.Conditions {
		if c.Type == t {
			return c.Status == s && c.Reason != druidv1alpha1.ReasonNotChecked
		}
	}
	return false
}

func readyMembers(etcd *druidv1alpha1.Etcd) int32 {
	var n int32
	for _, m := range etcd.Status.Members {
		if m.Status == druidv1alpha1.EtcdMemberStatusReady {
			n++
		}
	}
	return n
}
