package operation

import (
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
)

// OperationOf returns the value of the operation annotation gardenlet set on obj (`reconcile`, `migrate`,
// `restore`), or "" when there is none.
func OperationOf(obj client.Object) string {
	return obj.GetAnnotations()[extensionsv1alpha1.OperationAnnotation]
}

// HasOperationAnnotation tells whether gardenlet asked for an operation this controller acts on with the
// operation annotation: `reconcile`, `migrate` or `restore`.
func HasOperationAnnotation(obj client.Object) bool {
	switch OperationOf(obj) {
	case extensionsv1alpha1.OperationReconcile, extensionsv1alpha1.OperationMigrate, extensionsv1alpha1.OperationRestore:
		return true
	}
	return false
}

// NeedsReconcile tells whether an object that is not being deleted, migrated or skipped (Skip) must be
// reconciled: gardenlet changed its spec, asked for it explicitly (`reconcile` or `restore`), or the last
// operation did not succeed yet. Everything else is a no-op, so that a controller restart does not touch
// every bucket of the landscape.
func NeedsReconcile(obj client.Object, status *extensionsv1alpha1.DefaultStatus, finalizer string) bool {
	switch {
	case obj.GetGeneration() != status.ObservedGeneration,
		OperationOf(obj) == extensionsv1alpha1.OperationReconcile,
		OperationOf(obj) == extensionsv1alpha1.OperationRestore,
		status.LastOperation == nil,
		status.LastOperation.State != extensionsv1alpha1.LastOperationStateSucceeded,
		!hasFinalizer(obj, finalizer):
		return true
	}
	return false
}

func hasFinalizer(obj client.Object, finalizer string) bool {
	for _, f := range obj.GetFinalizers() {
		if f == finalizer {
			return true
		}
	}
	return false
}

// TriggerPredicate lets through the events an extension controller acts on: creation, deletion, a spec change
// (generation), the operation annotations `reconcile`, `migrate` and `restore`, and the start of a deletion. Status updates — including the
// controller's own — are filtered out, which is what keeps the controller from re-triggering itself.
func TriggerPredicate() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			if e.ObjectNew == nil || e.ObjectOld == nil {
				return false
			}
			return e.ObjectNew.GetGeneration() != e.ObjectOld.GetGeneration() ||
				HasOperationAnnotation(e.ObjectNew) ||
				(e.ObjectNew.GetDeletionTimestamp() != nil && e.ObjectOld.GetDeletionTimestamp() == nil)
		},
	}
}

// TypePredicate lets through only objects of the provider types the controller implements, so that several
// backup extensions can run in one seed.
func TypePredicate(typeOf func(client.Object) string, supported func(string) bool) predicate.Predicate {
	return predicate.NewPredicateFuncs(func(obj client.Object) bool { return supported(typeOf(obj)) })
}
