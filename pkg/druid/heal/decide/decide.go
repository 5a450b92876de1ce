package decide

import (
	"sort"

	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/health"
)

// Decide classifies the observed state into the decision table's cases and returns the actions, in the
// order they should be applied. A cluster in the pink of health (case 1) gets none.
//
// Precedence: a quorum-loss recovery in progress is driven to its end before anything else is judged
// (its intermediate states look like other cases); quorum loss (case 10) excludes deleting single pods
// (case 9); a member relocation (case 14) is judged before quorum loss, so that a single member whose
// volume is lost is reported as such; a hibernated Etcd (spec.replicas 0) or one without StatefulSet only gets its status refreshed.
func Decide(in Input) []Action {
	if pinkOfHealth(in) {
		return nil
	}
	var actions []Action
	for _, statusCase := range []func(Input) []Action{
		membersOutOfSyncWithLeases, allMembersReadyStaleTrue, allMembersReadyStaleFalse,
		readyStaleTrue, readyStaleFalse, unknownTooLong, podNotReady,
	} {
		actions = append(actions, statusCase(in)...)
	}
	if in.Observed.Etcd.Spec.Replicas == 0 || in.Observed.StatefulSet == nil {
		return actions
	}
	if recovery := quorumLossRecoveryInProgress(in); recovery != nil {
		return append(actions, recovery...)
	}
	actions = append(actions, memberRelocation(in)...)
	if lost := quorumLost(in); lost != nil {
		return append(actions, lost...)
	}
	for _, memberCase := range []func(Input) []Action{minorityNotReady, scaleUp, scaleDown, superfluousMembers} {
		actions = append(actions, memberCase(in)...)
	}
	return actions
}

// pinkOfHealth is case 1: every member Ready, Ready and AllMembersReady True, BackupReady not False, the
// cluster at its desired size, and nothing in the stored status out of date. Nothing to do.
func pinkOfHealth(in Input) bool {
	etcd, c := in.Observed.Etcd, in.Computed
	replicas := etcd.Spec.Replicas
	if replicas == 0 || in.Observed.StatefulSet == nil || RecoveryPhaseOf(in.Observed.StatefulSet) != RecoveryIdle ||
		RelocatingMember(etcd.Status) != "" {
		return false
	}
	if int32(len(c.Members)) != replicas || in.Observed.ClusterSize != replicas ||
		ptr.Deref(in.Observed.StatefulSet.Spec.Replicas, 1) != replicas || len(leasesAtOrAbove(in, int(replicas))) > 0 {
		return false
	}
	for _, m := range c.Members {
		if m.Status != druidv1alpha1.EtcdMemberStatusReady {
			return false
		}
	}
	if !conditionIs(c, druidv1alpha1.ConditionTypeReady, druidv1alpha1.ConditionTrue) ||
		!conditionIs(c, druidv1alpha1.ConditionTypeAllMembersReady, druidv1alpha1.ConditionTrue) ||
		conditionIs(c, druidv1alpha1.ConditionTypeBackupReady, druidv1alpha1.ConditionFalse) {
		return false
	}
	return !membersChanged(etcd.Status.Members, c.Members) &&
		conditionIs(etcd.Status, druidv1alpha1.ConditionTypeReady, druidv1alpha1.ConditionTrue) &&
		conditionIs(etcd.Status, druidv1alpha1.ConditionTypeAllMembersReady, druidv1alpha1.ConditionTrue)
}

// clusterSize is the size the quorum is computed against (see health.ClusterSizeForQuorum).
func clusterSize(in Input) int32 {
	return health.ClusterSizeForQuorum(in.Observed, len(in.Computed.Members))
}

// notReadyPastGrace are the computed members that have been NotReady for at least the NotReady grace
// period ("NotReady for long enough to be evicted"), sorted by ordinal.
func notReadyPastGrace(in Input) []druidv1alpha1.EtcdMemberStatus {
	var out []druidv1alpha1.EtcdMemberStatus
	for _, m := range in.Computed.Members {
		if m.Status == druidv1alpha1.EtcdMemberStatusNotReady && in.Now.Sub(m.LastTransitionTime.Time) >= in.Thresholds.NotReady {
			out = append(out, m)
		}
	}
	return out
}

func countReady(members []druidv1alpha1.EtcdMemberStatus) int32 {
	var n int32
	for _, m := range members {
		if m.Status == druidv1alpha1.EtcdMemberStatusReady {
			n++
		}
	}
	return n
}

func conditionIs(status druidv1alpha1.EtcdStatus, t druidv1alpha1.ConditionType, s druidv1alpha1.ConditionStatus) bool {
	c := druidv1alpha1.FindCondition(status.Conditions, t)
	return c != nil && c.Status == s
}

// membersChanged tells whether the stored members differ from the computed ones in anything but time.
func membersChanged(stored, computed []druidv1alpha1.EtcdMemberStatus) bool {
	if len(stored) != len(computed) {
		return true
	}
	for i := range stored {
		if !sameMember(stored[i], computed[i]) {
			return true
		}
	}
	return false
}

func sameMember(a, b druidv1alpha1.EtcdMemberStatus) bool {
	return a.Name == b.Name && a.Status == b.Status && a.Reason == b.Reason && ptr.Deref(a.ID, "") == ptr.Deref(b.ID, "")
}

// leasesAtOrAbove are the names of the member leases whose ordinal is ≥ first, sorted by ordinal.
func leasesAtOrAbove(in Input, first int) []string {
	etcd := in.Observed.Etcd
	type named struct {
		name    string
		ordinal int
	}
	var found []named
	for _, l := range in.Observed.MemberLeases {
		if ordinal, ok := druidv1alpha1.OrdinalOf(etcd, l.Name); ok && ordinal >= first {
			found = append(found, named{l.Name, ordinal})
		}
	}
	sort.Slice(found, func(i, j int) bool { return found[i].ordinal < found[j].ordinal })
	names := make([]string, 0, len(found))
	for _, f := range found {
		names = append(names, f.name)
	}
	return names
}

func names(members []druidv1alpha1.EtcdMemberStatus) []string {
	out := make([]string, 0, len(members))
	for _, m := range members {
		out = append(out, m.Name)
	}
	return out
}
