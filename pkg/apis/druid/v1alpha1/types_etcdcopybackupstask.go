package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// EtcdCopyBackupsTask copies the backups of one store to another (e.g. during a control-plane migration);
// druid runs it as a Job `<task>-worker` executing `etcdbrctl copy`.
//
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Succeeded",type=string,JSONPath=`.status.conditions[?(@.type=="Succeeded")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type EtcdCopyBackupsTask struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   EtcdCopyBackupsTaskSpec   `json:"spec"`
	Status EtcdCopyBackupsTaskStatus `json:"status,omitempty"`
}

// EtcdCopyBackupsTaskList is a list of EtcdCopyBackupsTasks.
//
// +kubebuilder:object:root=true
type EtcdCopyBackupsTaskList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []EtcdCopyBackupsTask `json:"items"`
}

// EtcdCopyBackupsTaskSpec says what to copy from where to where.
type EtcdCopyBackupsTaskSpec struct {
	// PodLabels are applied to the worker Job's pod.
	// +optional
	PodLabels map[string]string `json:"podLabels,omitempty"`
	// SourceStore is the store to copy from.
	SourceStore StoreSpec `json:"sourceStore"`
	// TargetStore is the store to copy to.
	TargetStore StoreSpec `json:"targetStore"`
	// MaxBackupAge limits the copy to backups younger than this many days.
	// +optional
	MaxBackupAge *uint32 `json:"maxBackupAge,omitempty"`
	// MaxBackups limits the copy to this many of the newest full snapshots.
	// +optional
	MaxBackups *uint32 `json:"maxBackups,omitempty"`
	// WaitForFinalSnapshot makes the copy wait for a final full snapshot in the source store.
	// +optional
	WaitForFinalSnapshot *WaitForFinalSnapshotSpec `json:"waitForFinalSnapshot,omitempty"`
}

// WaitForFinalSnapshotSpec makes a copy wait until the source has a final full snapshot.
type WaitForFinalSnapshotSpec struct {
	Enabled bool `json:"enabled"`
	// Timeout bounds the wait.
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`
}

// EtcdCopyBackupsTaskStatus is the observed state of a copy.
type EtcdCopyBackupsTaskStatus struct {
	// Conditions are Succeeded and Failed, mirrored from the worker Job.
	// +optional
	Conditions []Condition `json:"conditions,omitempty"`
	// ObservedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration *int64 `json:"observedGeneration,omitempty"`
	// LastError is the last error of the copy.
	// +optional
	LastError *string `json:"lastError,omitempty"`
}

// The condition types of an EtcdCopyBackupsTask.
const (
	EtcdCopyBackupsTaskSucceeded ConditionType = "Succeeded"
	EtcdCopyBackupsTaskFailed    ConditionType = "Failed"
)
