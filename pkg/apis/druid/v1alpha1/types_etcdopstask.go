package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// EtcdOpsTask asks druid to run one operation on an Etcd of its namespace (spec.etcdName), once. The
// operation is named by the one member of spec.config that is set; this druid runs onDemandSnapshot (a full
// or delta snapshot through the backup leader's sidecar) and rejects the other kinds the upstream API
// knows. At most one unfinished task per Etcd runs: a second one is Rejected. A finished task (Succeeded,
// Failed or Rejected) is deleted spec.ttlSecondsAfterFinished after status.lastTransitionTime.
//
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=eot,scope=Namespaced
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.state`
// +kubebuilder:printcolumn:name="Etcd",type=string,JSONPath=`.spec.etcdName`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.lastOperation.type`,priority=1
// +kubebuilder:printcolumn:name="TTL",type=integer,JSONPath=`.spec.ttlSecondsAfterFinished`,priority=1
type EtcdOpsTask struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec names the Etcd and the operation.
	// +kubebuilder:validation:Required
	Spec EtcdOpsTaskSpec `json:"spec"`
	// Status is the task's progress, written by druid.
	// +optional
	Status EtcdOpsTaskStatus `json:"status,omitempty"`
}

// EtcdOpsTaskList is a list of EtcdOpsTasks.
//
// +kubebuilder:object:root=true
type EtcdOpsTaskList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []EtcdOpsTask `json:"items"`
}

// EtcdOpsTaskSpec is what to do to which Etcd; none of it changes after creation.
type EtcdOpsTaskSpec struct {
	// Config is the operation: exactly one of its members is set.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="config is immutable"
	Config EtcdOpsTaskConfig `json:"config"`
	// TTLSecondsAfterFinished is how long a finished task (state Succeeded, Failed or Rejected) is kept,
	// counted from status.lastTransitionTime; then druid deletes it.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:default:=3600
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="ttlSecondsAfterFinished is immutable"
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`
	// EtcdName is the Etcd, in the task's namespace, the operation runs on. The upstream API marks it
	// optional in the schema; a task without it is rejected (by validation, or Rejected by the controller).
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="etcdName is immutable"
	EtcdName *string `json:"etcdName"`
}

// EtcdOpsTaskConfig holds the one operation of a task.
//
// +kubebuilder:validation:MinProperties=1
// +kubebuilder:validation:MaxProperties=1
type EtcdOpsTaskConfig struct {
	// OnDemandSnapshot takes a full or delta snapshot now, through the backup leader's sidecar.
	// +optional
	OnDemandSnapshot *OnDemandSnapshotConfig `json:"onDemandSnapshot,omitempty"`
	// RecoverFromQuorumLoss is the upstream druid's quorum-loss recovery task. It is part of the schema so
	// that such a task is stored as written, but this druid does not run it: validation refuses it and the
	// controller rejects it (ERR_UNSUPPORTED_TASK_TYPE). This project's druid recovers from quorum loss by
	// itself (docs/compatibility.md).
	// +optional
	RecoverFromQuorumLoss *RecoverFromQuorumLossConfig `json:"recoverFromQuorumLoss,omitempty"`
}

// OnDemandSnapshotType is the kind of snapshot an on-demand snapshot task takes.
//
// +kubebuilder:validation:Enum=full;delta
type OnDemandSnapshotType string

const (
	// OnDemandSnapshotTypeFull is a full snapshot of the database (`GET /snapshot/full`).
	OnDemandSnapshotTypeFull OnDemandSnapshotType = "full"
	// OnDemandSnapshotTypeDelta is a delta of the revisions since the last snapshot (`GET /snapshot/delta`).
	OnDemandSnapshotTypeDelta OnDemandSnapshotType = "delta"
)

// Defaults of an on-demand snapshot task, as the upstream CRD sets them.
const (
	DefaultOpsTaskTTLSecondsAfterFinished int32 = 3600
	DefaultOnDemandSnapshotTimeoutDelta   int32 = 60
	DefaultOnDemandSnapshotTimeoutFull    int32 = 480
	// MinOnDemandSnapshotTimeoutDelta and MinOnDemandSnapshotTimeoutFull are the schema's minimums.
	MinOnDemandSnapshotTimeoutDelta int32 = 10
	MinOnDemandSnapshotTimeoutFull  int32 = 120
)

// OnDemandSnapshotConfig is an on-demand snapshot task.
//
// +kubebuilder:validation:XValidation:rule="self.type == 'delta' ? !has(self.isFinal) || self.isFinal == false : true",message="isFinal must be false (or omitted) when type is 'delta'"
type OnDemandSnapshotConfig struct {
	// Type is `full` or `delta`.
	// +kubebuilder:validation:Required
	Type OnDemandSnapshotType `json:"type"`
	// IsFinal marks a full snapshot as the final one of a cluster that is shut down on purpose
	// (`?final=true`); only for type full.
	// +optional
	IsFinal *bool `json:"isFinal,omitempty"`
	// TimeoutSecondsDelta bounds a delta snapshot, in seconds.
	// +optional
	// +kubebuilder:default=60
	// +kubebuilder:validation:Minimum=10
	TimeoutSecondsDelta *int32 `json:"timeoutSecondsDelta,omitempty"`
	// TimeoutSecondsFull bounds a full snapshot, in seconds.
	// +optional
	// +kubebuilder:default=480
	// +kubebuilder:validation:Minimum=120
	TimeoutSecondsFull *int32 `json:"timeoutSecondsFull,omitempty"`
}

// RecoverFromQuorumLossConfig is the upstream druid's configuration of its quorum-loss recovery task, kept
// for the schema only (see EtcdOpsTaskConfig.RecoverFromQuorumLoss).
type RecoverFromQuorumLossConfig struct {
	// ScaleDownTimeout bounds the wait for the StatefulSet to reach 0 replicas.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$"
	ScaleDownTimeout *metav1.Duration `json:"scaleDownTimeout,omitempty"`
	// PodReadyTimeout bounds the wait for the first member's pod to become ready again.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern="^([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$"
	PodReadyTimeout *metav1.Duration `json:"podReadyTimeout,omitempty"`
}

// TaskState is where a task is in its life: Pending → InProgress → Succeeded or Failed; Pending →
// Rejected when a precondition does not hold. The last three are final.
//
// +kubebuilder:validation:Enum=Pending;InProgress;Succeeded;Failed;Rejected
type TaskState string

const (
	// TaskStatePending: accepted, not yet admitted.
	TaskStatePending TaskState = "Pending"
	// TaskStateInProgress: admitted and running.
	TaskStateInProgress TaskState = "InProgress"
	// TaskStateSucceeded: the operation completed.
	TaskStateSucceeded TaskState = "Succeeded"
	// TaskStateFailed: the operation ran and failed.
	TaskStateFailed TaskState = "Failed"
	// TaskStateRejected: a precondition did not hold (no such Etcd, not ready, no backup store, another
	// task of the Etcd unfinished, an operation this druid does not run); nothing was done.
	TaskStateRejected TaskState = "Rejected"
)

// The phases of a task as status.lastOperation.type records them, with the states of each phase.
const (
	// LastOperationTypeAdmit checks the task's preconditions.
	LastOperationTypeAdmit LastOperationType = "Admit"
	// LastOperationTypeExecution runs the operation.
	LastOperationTypeExecution LastOperationType = "Execution"
	// LastOperationTypeCleanup removes a finished task once its TTL expired.
	LastOperationTypeCleanup LastOperationType = "Cleanup"

	LastOperationStateInProgress LastOperationState = "InProgress"
	LastOperationStateCompleted  LastOperationState = "Completed"
	LastOperationStateFailed     LastOperationState = "Failed"
)

// EtcdOpsTaskStatus is a task's progress.
type EtcdOpsTaskStatus struct {
	// State is the task's state.
	// +optional
	State *TaskState `json:"state,omitempty"`
	// LastTransitionTime is when State last changed; a finished task's TTL counts from it.
	// +optional
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`
	// StartedAt is when the task went from Pending to InProgress.
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// LastErrors are the latest errors of the task, newest last, at most 10.
	// +optional
	// +kubebuilder:validation:MaxItems=10
	LastErrors []LastError `json:"lastErrors,omitempty"`
	// LastOperation is the phase the task is in (type Admit, Execution, Cleanup) and how it went.
	// +optional
	LastOperation *LastOperation `json:"lastOperation,omitempty"`
	// Snapshot is the snapshot an on-demand snapshot task took, as the sidecar described it: its object
	// name and last revision. Unset when the sidecar took no delta (nothing new since the last snapshot)
	// or named none. (ours)
	// +optional
	Snapshot *SnapshotStatus `json:"snapshot,omitempty"`
}

// MaxOpsTaskLastErrors is how many errors status.lastErrors keeps.
const MaxOpsTaskLastErrors = 10

// IsFinished tells whether the task reached a final state (Succeeded, Failed or Rejected).
func (t *EtcdOpsTask) IsCompleted() bool {
	if t.Status.State == nil {
		return false
	}
	switch *t.Status.State {
	case TaskStateSucceeded, TaskStateFailed, TaskStateRejected:
		return true
	}
	return false
}

// TTLAfterFinished is spec.ttlSecondsAfterFinished, or its default when unset.
func OpsTaskTTLAfterFinished(t *EtcdOpsTask) time.Duration {
	ttl := DefaultOpsTaskTTLSecondsAfterFinished
	if t.Spec.TTLSecondsAfterFinished != nil {
		ttl = *t.Spec.TTLSecondsAfterFinished
	}
	return time.Duration(ttl) * time.Second
}

// ExpiresAt is when a finished task is to be deleted: its last transition plus its TTL. It is the zero
// time for a task that has not finished.
func OpsTaskExpiresAt(t *EtcdOpsTask) time.Time {
	if !t.IsCompleted() || t.Status.LastTransitionTime == nil {
		return time.Time{}
	}
	return t.Status.LastTransitionTime.Add(OpsTaskTTLAfterFinished(t))
}

// Timeout is how long the snapshot may take: timeoutSecondsFull or timeoutSecondsDelta by type, or their
// defaults when unset.
func OnDemandSnapshotTimeout(c *OnDemandSnapshotConfig) time.Duration {
	seconds, set := DefaultOnDemandSnapshotTimeoutFull, c.TimeoutSecondsFull
	if c.Type == OnDemandSnapshotTypeDelta {
		seconds, set = DefaultOnDemandSnapshotTimeoutDelta, c.TimeoutSecondsDelta
	}
	if set != nil {
		seconds = *set
	}
	return time.Duration(seconds) * time.Second
}
