package etcd

import (
	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// HasReconcileAnnotation tells whether the Etcd asks for a spec reconcile with
// gardener.cloud/operation=reconcile or druid.gardener.cloud/operation=reconcile.
func HasReconcileAnnotation(etcd *druidv1alpha1.Etcd) bool {
	a := etcd.Annotations
	return a[druidv1alpha1.GardenerOperationAnnotation] == druidv1alpha1.OperationReconcile ||
		a[druidv1alpha1.DruidOperationAnnotation] == druidv1alpha1.OperationReconcile
}

// SpecReconcileSuspended tells whether druid.gardener.cloud/suspend-etcd-spec-reconcile is set (any value).
func SpecReconcileSuspended(etcd *druidv1alpha1.Etcd) bool {
	_, ok := etcd.Annotations[druidv1alpha1.SuspendEtcdSpecReconcileAnnotation]
	return ok
}

// SpecReconcileWanted is the reconcile trigger contract (as upstream etcd-druid defines it):
//   - the operation annotation `reconcile` always asks for a spec reconcile;
//   - an Etcd that was never reconciled successfully (no status.observedGeneration) is reconciled, so that
//     a new Etcd gets its components without an annotation;
//   - with auto-reconcile on, every generation that was not reconciled successfully yet is reconciled;
//   - with auto-reconcile off, a spec change alone does nothing: Gardener decides when a cluster rolls by
//     setting the annotation.
//
// Because observedGeneration is only written on success, a failed or requeued spec reconcile is retried
// until it succeeds, and the annotation stays until then.
func SpecReconcileWanted(etcd *druidv1alpha1.Etcd, autoReconcile bool) (bool, string) {
	switch {
	case HasReconcileAnnotation(etcd):
		return true, "operation annotation"
	case etcd.Status.ObservedGeneration == nil:
		return true, "never reconciled"
	case autoReconcile && *etcd.Status.ObservedGeneration != etcd.Generation:
		return true, "generation changed"
	default:
		return false, ""
	}
}
