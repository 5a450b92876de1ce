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
	EventReasonDeletionError   = "DeletionError"
	// EventReasonEtcdAlarm: the EtcdAlarm condition changed its reason (an alarm appeared, the NOSPACE
	// recovery cannot disarm, the alarm is gone).
	EventReasonEtcdAlarm = "EtcdAlarm"
)

// Event actions (events.k8s.io/v1 requires one).
const (
	actionReconcile = "Reconcile"
	actionDelete    = "Delete"
)

// Event reasons of the flows' own decisions after the spec flow's components (the heal run's are in package heal).
const (
	EventReasonPodDisruptionBudgetUpdated = "PodDisruptionBudgetUpdated"
	actionHeal                            = "Heal"
)

// Event reasons of the member pod updates (podupdate.go): a pod deleted to bring its member to the
// StatefulSet's update revision, with why it was chosen; an update held because replacing the next member
// would drop the serving members below the quorum, the update revision does not start, or BackupReady is
// False.
const (
	EventReasonMemberPodUpdated    = "MemberPodUpdated"
	EventReasonMemberPodUpdateHeld = "MemberPodUpdateHeld"
	actionUpdatePod                = "UpdatePod"
)
