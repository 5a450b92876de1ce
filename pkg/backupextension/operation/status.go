package operation

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
)

// Type returns the operation a reconcile of an object that is not being deleted performs: Create until a
// first operation succeeded, Reconcile afterwards.
func Type(status *extensionsv1alpha1.DefaultStatus) extensionsv1alpha1.LastOperationType {
	last := status.LastOperation
	if last == nil || (last.Type == extensionsv1alpha1.LastOperationTypeCreate && last.State != extensionsv1alpha1.LastOperationStateSucceeded) {
		return extensionsv1alpha1.LastOperationTypeCreate
	}
	return extensionsv1alpha1.LastOperationTypeReconcile
}

// SetProcessing records that an operation started; the last error stays until the operation ends, so that
// an operator still sees why the previous attempt failed.
func SetProcessing(status *extensionsv1alpha1.DefaultStatus, opType extensionsv1alpha1.LastOperationType, description string, now time.Time) {
	status.LastOperation = &extensionsv1alpha1.LastOperation{
		Type:           opType,
		State:          extensionsv1alpha1.LastOperationStateProcessing,
		Progress:       1,
		Description:    description,
		LastUpdateTime: metav1.NewTime(now),
	}
}

// SetSucceeded records that an operation completed for the given generation and clears the last error.
func SetSucceeded(status *extensionsv1alpha1.DefaultStatus, opType extensionsv1alpha1.LastOperationType, description string, generation int64, now time.Time) {
	status.LastOperation = &extensionsv1alpha1.LastOperation{
		Type:           opType,
		State:          extensionsv1alpha1.LastOperationStateSucceeded,
		Progress:       100,
		Description:    description,
		LastUpdateTime: metav1.NewTime(now),
	}
	status.LastError = nil
	status.ObservedGeneration = generation
}

// SetError records that an operation failed and will be retried; gardenlet shows lastError to the user.
func SetError(status *extensionsv1alpha1.DefaultStatus, opType extensionsv1alpha1.LastOperationType, err error, now time.Time, codes ...extensionsv1alpha1.ErrorCode) {
	t := metav1.NewTime(now)
	description := err.Error()
	status.LastOperation = &extensionsv1alpha1.LastOperation{
		Type:           opType,
		State:          extensionsv1alpha1.LastOperationStateError,
		Progress:       50,
		Description:    description,
		LastUpdateTime: t,
	}
	status.LastError = &extensionsv1alpha1.LastError{Description: description, Codes: codes, LastUpdateTime: &t}
}
