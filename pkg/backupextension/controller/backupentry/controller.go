package backupentry

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/operation"
)

// AddToManager registers the BackupEntry controller with the manager. Besides BackupEntries it watches the
// creation of namespaces, so an entry that waited for its shoot namespace is reconciled as soon as the
// namespace appears rather than at the next retry.
func AddToManager(mgr manager.Manager, opts Options) error {
	opts = opts.withDefaults()
	r := &Reconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Options:   opts,
		runner: &operation.Runner[*extensionsv1alpha1.BackupEntry]{
			Client:    mgr.GetClient(),
			Recorder:  mgr.GetEventRecorder(ControllerName),
			Finalizer: extensionsv1alpha1.BackupEntryFinalizer,
			Status: func(be *extensionsv1alpha1.BackupEntry) *extensionsv1alpha1.DefaultStatus {
				return &be.Status.DefaultStatus
			},
		},
	}
	typeOf := func(obj client.Object) string { return obj.(*extensionsv1alpha1.BackupEntry).Spec.Type }
	onlyCreate := predicate.Funcs{
		UpdateFunc:  func(event.UpdateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&extensionsv1alpha1.BackupEntry{}, builder.WithPredicates(
			operation.TriggerPredicate(),
			operation.TypePredicate(typeOf, opts.Providers.Supports),
		)).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.entriesOfNamespace), builder.WithPredicates(onlyCreate)).
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.MaxConcurrentReconciles, RateLimiter: operation.RateLimiter()}).
		Complete(r)
}

// entriesOfNamespace maps a namespace to the BackupEntries of the shoot living in it.
func (r *Reconciler) entriesOfNamespace(ctx context.Context, ns client.Object) []reconcile.Request {
	entries := &extensionsv1alpha1.BackupEntryList{}
	if err := r.Client.List(ctx, entries); err != nil {
		logf.FromContext(ctx).Error(err, "Listing backup entries for a new namespace failed", "namespace", ns.GetName())
		return nil
	}
	var requests []reconcile.Request
	for _, be := range entries.Items {
		if shootNamespace, err := ShootNamespace(be.Name); err == nil && shootNamespace == ns.GetName() {
			requests = append(requests, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&be)})
		}
	}
	return requests
}
