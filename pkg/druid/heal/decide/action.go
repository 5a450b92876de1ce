package decide

import (
	"time"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/health"
)

// Case is the number of a row of druid's decision table based on the status.
type Case int

// The rows of the decision table, named after the situation each describes.
const (
	CasePinkOfHealth              Case = 1
	CaseMembersOutOfSyncWithLease Case = 2
	CaseAllMembersReadyStaleTrue  Case = 3
	CaseAllMembersReadyStaleFalse Case = 4
	CaseReadyStaleTrue            Case = 5
	CaseReadyStaleFalse           Case = 6
	CaseUnknownTooLong            Case = 7
	CasePodNotReady               Case = 8
	CaseMinorityNotReady          Case = 9
	CaseQuorumLost                Case = 10
	CaseScaleUp                   Case = 11
	CaseScaleDown                 Case = 12
	CaseSuperfluousMembers        Case = 13
	CaseMemberVolumeUnreachable   Case = 14
)

// Kind is what an Action asks the executor to do.
type Kind string

const (
	// KindWriteStatus: the recomputed status answers the case; the status write is the whole action.
	KindWriteStatus Kind = "WriteStatus"
	// KindDeletePods: delete the pods of Members (case 9).
	KindDeletePods Kind = "DeletePods"
	// KindStartQuorumRecovery: begin case 10's recovery by scaling the StatefulSet to 0.
	KindStartQuorumRecovery Kind = "StartQuorumRecovery"
	// KindContinueQuorumRecovery: a recovery is in progress (marked on the StatefulSet); drive its next step.
	KindContinueQuorumRecovery Kind = "ContinueQuorumRecovery"
	// KindManualInterventionRequired: quorum is lost but there is no usable backup; tell the operator.
	KindManualInterventionRequired Kind = "ManualInterventionRequired"
	// KindLeaseRenewalSuspected: enough leases are stale for case 10, but a member counted as lost may
	// still serve (its pod or its etcd container is Ready); tell the operator, start nothing.
	KindLeaseRenewalSuspected Kind = "LeaseRenewalSuspected"
	// KindScaleUpBySpecFlow: a scale-up is pending; the spec flow does it (case 11), nothing to do here.
	KindScaleUpBySpecFlow Kind = "ScaleUpBySpecFlow"
	// KindCompleteScaleDown: the StatefulSet is down at Replicas; delete the leases of Members and set
	// status.clusterSize to Replicas (case 12).
	KindCompleteScaleDown Kind = "CompleteScaleDown"
	// KindRemoveSuperfluousMembers: drop Members from the status and delete their leases (case 13).
	KindRemoveSuperfluousMembers Kind = "RemoveSuperfluousMembers"
	// KindRelocateMember: if the volume of Members[0] is unreachable (JudgeRelocation), delete its claim
	// and pod so that the StatefulSet recreates both elsewhere (case 14).
	KindRelocateMember Kind = "RelocateMember"
	// KindRelocationHeld: Members[0] would be relocated if its volume is unreachable, but may not be
	// (Message says why); the action reports it when the volume is unreachable (case 14).
	KindRelocationHeld Kind = "RelocationHeld"
	// KindMemberRelocated: the relocated member Members[0] is Ready again (case 14).
	KindMemberRelocated Kind = "MemberRelocated"
)

// Action is one thing druid should do about the observed state.
type Action struct {
	// Case is the decision-table row that asked for the action.
	Case Case
	// Kind is what to do.
	Kind Kind
	// Members are the member names (lease names) the action concerns, sorted by ordinal.
	Members []string
	// Replicas is the target replica count / cluster size of scale actions.
	Replicas int32
	// Message explains the action for logs, events and lastOperation.
	Message string
}

// Input is what Decide judges: the status flow's observation, the status computed from it at Now and
// the grace periods. Observed.Etcd carries the status as stored before this round, so stale members and
// conditions (cases 2–8) show as the difference between Observed.Etcd.Status and Computed.
type Input struct {
	Observed   health.Observed
	Computed   druidv1alpha1.EtcdStatus
	Thresholds health.Thresholds
	Now        time.Time
}
