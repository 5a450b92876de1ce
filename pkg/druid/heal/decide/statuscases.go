package decide

import (
	"fmt"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/health"
)

// Cases 2–8 of the decision table: the stored status no longer says what the leases, pods and members
// say. Each returns a KindWriteStatus action naming what the recomputed status corrects.

// membersOutOfSyncWithLeases is case 2: members whose stored entry disagrees with their lease — a lease
// that expired (→ Unknown/LeaseExpired) or was renewed (→ Ready/LeaseSucceeded), or a new member ID.
func membersOutOfSyncWithLeases(in Input) []Action {
	return changedMembers(in, CaseMembersOutOfSyncWithLease, "member status follows the lease",
		druidv1alpha1.MemberReasonLeaseSucceeded, druidv1alpha1.MemberReasonLeaseExpired)
}

// unknownTooLong is case 7: members that stayed Unknown past the Unknown grace period become NotReady with
// reason UnknownGracePeriodExceeded.
func unknownTooLong(in Input) []Action {
	return changedMembers(in, CaseUnknownTooLong, "member Unknown for longer than the grace period is NotReady",
		druidv1alpha1.MemberReasonUnknownGracePeriodExceeded)
}

// podNotReady is case 8: members whose lease expired while their pod is not ready (or gone) become
// NotReady with reason PodNotReady without waiting for the Unknown grace period; members whose pod is not
// ready and whose sidecar reports their data lost without a leader, with reason DataLost, whatever the
// lease's age.
func podNotReady(in Input) []Action {
	return changedMembers(in, CasePodNotReady, "member whose pod is not ready is NotReady", druidv1alpha1.MemberReasonPodNotReady,
		health.MemberReasonDataLost)
}

// changedMembers returns one action for the computed members with one of reasons whose stored entry is
// missing or different.
func changedMembers(in Input, c Case, message string, reasons ...string) []Action {
	stored := map[string]druidv1alpha1.EtcdMemberStatus{}
	for _, m := range in.Observed.Etcd.Status.Members {
		stored[m.Name] = m
	}
	var changed []string
	for _, m := range in.Computed.Members {
		if !hasReason(m, reasons) {
			continue
		}
		if prev, ok := stored[m.Name]; !ok || !sameMember(prev, m) {
			changed = append(changed, m.Name)
		}
	}
	if len(changed) == 0 {
		return nil
	}
	return []Action{{Case: c, Kind: KindWriteStatus, Members: changed, Message: message}}
}

func hasReason(m druidv1alpha1.EtcdMemberStatus, reasons []string) bool {
	for _, r := range reasons {
		if m.Reason == r {
			return true
		}
	}
	return false
}

// allMembersReadyStaleTrue is case 3: every member is Ready but the stored AllMembersReady is not True.
func allMembersReadyStaleTrue(in Input) []Action {
	return staleCondition(in, CaseAllMembersReadyStaleTrue, druidv1alpha1.ConditionTypeAllMembersReady, druidv1alpha1.ConditionTrue)
}

// allMembersReadyStaleFalse is case 4: not every member is Ready but the stored AllMembersReady is True.
func allMembersReadyStaleFalse(in Input) []Action {
	return staleCondition(in, CaseAllMembersReadyStaleFalse, druidv1alpha1.ConditionTypeAllMembersReady, druidv1alpha1.ConditionFalse)
}

// readyStaleTrue is case 5: a majority of members is Ready (not NotReady) but the stored Ready is not True.
func readyStaleTrue(in Input) []Action {
	return staleCondition(in, CaseReadyStaleTrue, druidv1alpha1.ConditionTypeReady, druidv1alpha1.ConditionTrue)
}

// readyStaleFalse is case 6: a majority of members is NotReady but the stored Ready is True.
func readyStaleFalse(in Input) []Action {
	return staleCondition(in, CaseReadyStaleFalse, druidv1alpha1.ConditionTypeReady, druidv1alpha1.ConditionFalse)
}

// staleCondition applies when the computed condition t has status want and the stored one (if any) does
// not. A condition seen for the first time is not stale, it is new.
func staleCondition(in Input, c Case, t druidv1alpha1.ConditionType, want druidv1alpha1.ConditionStatus) []Action {
	if !conditionIs(in.Computed, t, want) {
		return nil
	}
	stored := in.Observed.Etcd.Status
	if conditionIs(stored, t, want) || !hasCondition(stored, t) {
		return nil
	}
	return []Action{{Case: c, Kind: KindWriteStatus, Message: fmt.Sprintf("condition %s becomes %s", t, want)}}
}

func hasCondition(status druidv1alpha1.EtcdStatus, t druidv1alpha1.ConditionType) bool {
	for _, c := range status.Conditions {
		if c.Type == t {
			return true
		}
	}
	return false
}
