package operation

import (
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
)

// HasReconcileAnnotation tells whether gardenlet asked for a reconcile with the operation annotation.
func HasReconcileAnnotation(obj client.Object) bool {
	return obj.GetAnnotations()[extensionsv1alpha1.OperationAnnotation] == extensionsv1alpha1.OperationReconcile
}

// NeedsReconcile tells whether an object that is not being deleted must be reconciled: gardenlet changed its
// spec, asked for it explicitly, or the last operation did not succeed yet. Everything else is a no-op, so
// that a controller restart does not touch every bucket of the landscape.
func NeedsReconcile(obj client.Object, status *extensionsv1alpha1.DefaultStatus, finalizer string) bool {
	switch {
	case obj.GetGeneration() != status.ObservedGeneration,
		HasReconcileAnnotation(obj),
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
// (generation), the reconcile annotation, and the start of a deletion. Status updates — including the
// controller's own — are filtered out, which is what keeps the controller from re-triggering itself.
func TriggerPredicate() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			if e.ObjectNew == nil || e.ObjectOld == nil {
				return false
			}
			return e.ObjectNew.GetGeneration() != e.ObjectOld.GetGeneration() ||
				HasReconcileAnnotation(e.ObjectNew) ||
				(e.ObjectNew.GetDeletionTimestamp() != nil && e.ObjectOld.GetDeletionTimestamp() == nil)
		},
	}
}

// TypePredicate lets through only objects of the provider types the controller implements, so that several
// backup extensions can run in one seed.
func TypePredicate(typeOf func(client.Object) string, supported func(string) bool) predicate.Predicate {
	return predicate.NewPredicateFuncs(func(obj client.Object) bool { return supported(typeOf(obj)) })
}
