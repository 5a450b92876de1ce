package v1alpha1

import (
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// DefaultSpec is the part every extension resource's spec shares.
type DefaultSpec struct {
	// Type is the provider type (e.g. local, s3) that selects the extension controller.
	Type string `json:"type"`
	// Class selects the extension class (seed or shoot); immutable.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.class is immutable"
	// +optional
	Class *ExtensionClass `json:"class,omitempty"`
	// ProviderConfig is provider-specific configuration.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	ProviderConfig *runtime.RawExtension `json:"providerConfig,omitempty"`
}

// ExtensionClass is the class of an extension resource.
type ExtensionClass string

// DefaultStatus is the part every extension resource's status shares.
type DefaultStatus struct {
	// ProviderStatus is provider-specific output.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	ProviderStatus *runtime.RawExtension `json:"providerStatus,omitempty"`
	// Conditions of the resource.
	// +optional
	Conditions []Condition `json:"conditions,omitempty"`
	// LastError is the last error of an operation, if it failed.
	// +optional
	LastError *LastError `json:"lastError,omitempty"`
	// LastOperation is the last operation run on the resource.
	// +optional
	LastOperation *LastOperation `json:"lastOperation,omitempty"`
	// ObservedGeneration is the generation the last operation reconciled.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// State is state that must survive a control-plane migration.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	State *runtime.RawExtension `json:"state,omitempty"`
	// Resources are references to resources the state refers to.
	// +optional
	Resources []NamedResourceReference `json:"resources,omitempty"`
}

// NamedResourceReference is a named reference to a resource.
type NamedResourceReference struct {
	Name        string                                    `json:"name"`
	ResourceRef autoscalingv1.CrossVersionObjectReference `json:"resourceRef"`
}

// Condition is Gardener's condition shape (gardencorev1beta1.Condition).
type Condition struct {
	Type               string          `json:"type"`
	Status             ConditionStatus `json:"status"`
	LastTransitionTime metav1.Time     `json:"lastTransitionTime"`
	LastUpdateTime     metav1.Time     `json:"lastUpdateTime"`
	Reason             string          `json:"reason"`
	Message            string          `json:"message"`
	// +optional
	Codes []ErrorCode `json:"codes,omitempty"`
}

// ConditionStatus is True, False, Unknown or Progressing.
type ConditionStatus string

// ErrorCode classifies an error (e.g. ERR_INFRA_UNAUTHORIZED).
type ErrorCode string

// LastError is the last error of an operation.
type LastError struct {
	Description string `json:"description"`
	// +optional
	TaskID *string `json:"taskID,omitempty"`
	// +optional
	Codes []ErrorCode `json:"codes,omitempty"`
	// +optional
	LastUpdateTime *metav1.Time `json:"lastUpdateTime,omitempty"`
}

// LastOperationType is the kind of an operation.
type LastOperationType string

// LastOperationState is how far an operation got.
type LastOperationState string

// Operation types and states of extension resources.
const (
	LastOperationTypeCreate    LastOperationType = "Create"
	LastOperationTypeReconcile LastOperationType = "Reconcile"
	LastOperationTypeDelete    LastOperationType = "Delete"
	LastOperationTypeMigrate   LastOperationType = "Migrate"
	LastOperationTypeRestore   LastOperationType = "Restore"

	LastOperationStateProcessing LastOperationState = "Processing"
	LastOperationStateSucceeded  LastOperationState = "Succeeded"
	LastOperationStateError      LastOperationState = "Error"
	LastOperationStateFailed     LastOperationState = "Failed"
	LastOperationStatePending    LastOperationState = "Pending"
	LastOperationStateAborted    LastOperationState = "Aborted"
)

// LastOperation is the last operation run on an extension resource.
type LastOperation struct {
	Description    string             `json:"description"`
	LastUpdateTime metav1.Time        `json:"lastUpdateTime"`
	Progress       int32              `json:"progress"`
	State          LastOperationState `json:"state"`
	Type           LastOperationType  `json:"type"`
}

// Annotations and finalizers of the extension resources.
const (
	// OperationAnnotation triggers reconcile, migrate or restore.
	OperationAnnotation = "gardener.cloud/operation"
	// OperationReconcile, OperationMigrate and OperationRestore are the values of OperationAnnotation.
	OperationReconcile = "reconcile"
	OperationMigrate   = "migrate"
	OperationRestore   = "restore"
	// BackupBucketFinalizer is set on BackupBuckets by the extension.
	BackupBucketFinalizer = "extensions.gardener.cloud/backupbucket"
	// BackupEntryFinalizer is set on BackupEntries by the extension.
	BackupEntryFinalizer = "extensions.gardener.cloud/backupentry"
)
