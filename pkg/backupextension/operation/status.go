package operation

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
)

// Type returns the operation a reconcile of obj performs, decided as Gardener's extensions library does
// (ComputeOperationType): the operation annotation `migrate` or `restore` first — `migrate` also wins over a
// deletion in progress —, then Delete for an object being deleted, then an unfinished Create, Migrate or
// Restore is continued, and Reconcile otherwise.
func Type(obj client.Object, status *extensionsv1alpha1.DefaultStatus) extensionsv1alpha1.LastOperationType {
	last := status.LastOperation
	switch {
	case OperationOf(obj) == extensionsv1alpha1.OperationMigrate:
		return extensionsv1alpha1.LastOperationTypeMigrate
	case OperationOf(obj) == extensionsv1alpha1.OperationRestore:
		return extensionsv1alpha1.LastOperationTypeRestore
	case obj.GetDeletionTimestamp() != nil:
		return extensionsv1alpha1.LastOperationTypeDelete
	case last == nil:
		return extensionsv1alpha1.LastOperationTypeCreate
	case last.State != extensionsv1alpha1.LastOperationStateSucceeded &&
		(last.Type == extensionsv1alpha1.LastOperationTypeCreate ||
			last.Type == extensionsv1alpha1.LastOperationTypeMigrate ||
			last.Type == extensionsv1alpha1.LastOperationTypeRestore):
		return last.Type
	}
	return extensionsv1alpha1.LastOperationTypeReconcile
}

// IsMigrated tells whether the object's last operation was a successful migration: its control plane moved to
// another seed, and this seed's controller leaves it alone until it is restored.
func IsMigrated(status *extensionsv1alpha1.DefaultStatus) bool {
	last := status.LastOperation
	return last != nil && last.Type == extensionsv1alpha1.LastOperationTypeMigrate && last.State == extensionsv1alpha1.LastOperationStateSucceeded
}

// Skip tells whether a reconcile of type opType must not touch a migrated object: only a restore brings it
// back, and a repeated migrate only finishes what the first one may have left (finalizer, annotation). A
// migrated object's reconcile, even one asked for with the annotation `reconcile`, and its deletion do
// nothing: the deletion of a migrated object must keep its backups.
func Skip(opType extensionsv1alpha1.LastOperationType, status *extensionsv1alpha1.DefaultStatus) bool {
	return IsMigrated(status) &&
		opType != extensionsv1alpha1.LastOperationTypeRestore &&
		opType != extensionsv1alpha1.LastOperationTypeMigrate
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
