package heal

import druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"

// QuorumLossRecovery is druid's own condition (not part of the upstream API) for the decision table's
// case 10: True while druid bootstraps a cluster that lost its quorum again from the backup, False with
// reason ManualInterventionRequired when it may not (no backup store, or a backup that was not current
// when the cluster lost its quorum), and False with reason Completed once the members were started again.
const ConditionTypeQuorumLossRecovery druidv1alpha1.ConditionType = "QuorumLossRecovery"

// Reasons of the QuorumLossRecovery condition.
const (
	ReasonRecoveryInProgress         = "InProgress"
	ReasonRecoveryCompleted          = "Completed"
	ReasonManualInterventionRequired = "ManualInterventionRequired"
	// ReasonRecoveryPermissionsMissing: the quorum is lost, but druid's role does not allow what the
	// recovery needs (deleting the members' data volumes); it does not start and changes nothing.
	ReasonRecoveryPermissionsMissing = "PermissionsMissing"
	// ReasonLeaseRenewalSuspected: enough member leases are stale for a quorum loss, but a "lost" member's
	// pod (or its etcd container) is Ready, so etcd may still serve: druid suspects the lease renewals
	// (sidecar, API server, webhook) and does not start the recovery.
	ReasonLeaseRenewalSuspected = "LeaseRenewalSuspected"
)

// Event reasons on the Etcd of the heal run's actions.
const (
	EventReasonMemberPodDeleted           = "MemberPodDeleted"
	EventReasonQuorumLossRecovery         = "QuorumLossRecovery"
	EventReasonManualInterventionRequired = "ManualInterventionRequired"
	EventReasonLeaseRenewalSuspected      = "LeaseRenewalSuspected"
	EventReasonScaledDown                 = "ScaledDown"
	EventReasonSuperfluousMembersRemoved  = "SuperfluousMembersRemoved"
)

// eventAction is the action of the heal run's events (events.k8s.io/v1 requires one); the quorum-loss
// recovery's steps name their own, because the recorder folds events that differ only in their message.
const eventAction = "Heal"
