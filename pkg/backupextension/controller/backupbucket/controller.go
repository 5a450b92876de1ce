package backupbucket

import (
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/operation"
)

// AddToManager registers the BackupBucket controller with the manager.
func AddToManager(mgr manager.Manager, opts Options) error {
	opts = opts.withDefaults()
	r := &Reconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Options:   opts,
		runner: &operation.Runner[*extensionsv1alpha1.BackupBucket]{
			Client:    mgr.GetClient(),
			Recorder:  mgr.GetEventRecorder(ControllerName),
			Finalizer: extensionsv1alpha1.BackupBucketFinalizer,
			Status: func(bb *extensionsv1alpha1.BackupBucket) *extensionsv1alpha1.DefaultStatus {
				return &bb.Status.DefaultStatus
			},
		},
	}
	typeOf := func(obj client.Object) string { return obj.(*extensionsv1alpha1.BackupBucket).Spec.Type }
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&extensionsv1alpha1.BackupBucket{}, builder.WithPredicates(
			operation.TriggerPredicate(),
			operation.TypePredicate(typeOf, opts.Providers.Supports),
		)).
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.MaxConcurrentReconciles, RateLimiter: operation.RateLimiter()}).
		Complete(r)
}
