package etcd

import druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"

// SecretsReady is druid's own condition (not part of the upstream API): it tells an operator why a spec
// reconcile does not proceed when a referenced secret or one of its keys is missing.
const (
	// ConditionTypeSecretsReady is True when every secret the spec references exists with the keys it needs.
	ConditionTypeSecretsReady druidv1alpha1.ConditionType = "SecretsReady"
	// ReasonSecretsMissing is the reason of SecretsReady=False; the message names every missing secret/key.
	ReasonSecretsMissing = "SecretsMissing"
	// ReasonAllSecretsPresent is the reason of SecretsReady=True.
	ReasonAllSecretsPresent = "AllSecretsPresent"
)

// ErrorCodeSecretsMissing is recorded in status.lastErrors while referenced secrets are missing.
const ErrorCodeSecretsMissing druidv1alpha1.ErrorCode = "ERR_SECRETS_MISSING"

// Event reasons on the Etcd for what an operator must notice.
const (
	EventReasonSecretsMissing         = "SecretsMissing"
	EventReasonSpecReconcileSuspended = "SpecReconcileSuspended"
	EventReasonReconcileError         = "ReconcileError"
	EventReasonScaleUpHeldBack        = "ScaleUpHeldBack"
	// EventReasonScaleInHeldBack: the StatefulSet keeps its replicas until the members a scale-in drops
	// have left the etcd membership (recorded by the StatefulSet operator's requeue).
	EventReasonScaleInHeldBack = "ScaleInHeldBack"
	EventReasonReconciled      = "Reconciled"
	EventReasonDeletionError   = "DeletionError"
)

// Event actions (events.k8s.io/v1 requires one).
const (
	actionReconcile = "Reconcile"
	actionDelete    = "Delete"
)

// QuorumLossRecovery is druid's own condition (not part of the upstream API) for seed 002's case 10: True
// while druid bootstraps a cluster that lost its quorum again from the backup, False with reason
// ManualInterventionRequired when it may not (no backup store, or a backup that was not current when the
// cluster lost its quorum), and False with reason Completed once the members were started again.
const ConditionTypeQuorumLossRecovery druidv1alpha1.ConditionType = "QuorumLossRecovery"

// Reasons of the QuorumLossRecovery condition.
const (
	ReasonRecoveryInProgress         = "InProgress"
	ReasonRecoveryCompleted          = "Completed"
	ReasonManualInterventionRequired = "ManualInterventionRequired"
	// ReasonLeaseRenewalSuspected: enough member leases are stale for a quorum loss, but a "lost" member's
	// pod (or its etcd container) is Ready, so etcd may still serve: druid suspects the lease renewals
	// (sidecar, API server, webhook) and does not start the recovery.
	ReasonLeaseRenewalSuspected = "LeaseRenewalSuspected"
)

// Event reasons of the decision-table healing.
const (
	EventReasonMemberPodDeleted           = "MemberPodDeleted"
	EventReasonQuorumLossRecovery         = "QuorumLossRecovery"
	EventReasonManualInterventionRequired = "ManualInterventionRequired"
	EventReasonLeaseRenewalSuspected      = "LeaseRenewalSuspected"
	EventReasonScaledDown                 = "ScaledDown"
	EventReasonSuperfluousMembersRemoved  = "SuperfluousMembersRemoved"
	EventReasonRollingUpdateHeldBack      = "RollingUpdateHeldBack"
	EventReasonPodDisruptionBudgetUpdated = "PodDisruptionBudgetUpdated"
	actionHeal                            = "Heal"
)
