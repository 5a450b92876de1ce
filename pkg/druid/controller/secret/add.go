package secret

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/secretref"
)

// ControllerName names the controller in logs, metrics and as the events' reporting controller.
const ControllerName = "etcd-secret-finalizer"

// AddToManager registers the secret finalizer controller (and the secretref index it needs) with mgr. The
// Etcd deletion flow needs no hook: once it removes druid's finalizer from the Etcd, the Etcd event brings
// each of its secrets here and the finalizers go. The controller has no switch: without it nothing
// stops a referenced TLS or backup secret from being deleted under a running cluster.
func AddToManager(ctx context.Context, mgr manager.Manager, cfg config.SecretController) error {
	cfg.Default()
	if err := cfg.Validate(); err != nil {
		return err
	}
	if err := secretref.AddIndex(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	r := &Reconciler{Client: mgr.GetClient(), SecretCache: mgr.GetCache(), Recorder: mgr.GetEventRecorder(ControllerName)}
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&corev1.Secret{}, builder.WithPredicates(finalizerOrDeletionChanged())).
		Watches(&druidv1alpha1.Etcd{}, handler.EnqueueRequestsFromMapFunc(referencedSecrets),
			builder.WithPredicates(secretReferencesChanged())).
		WithOptions(controller.Options{MaxConcurrentReconciles: cfg.Workers}).
		Complete(r)
}

// referencedSecrets maps an Etcd to every Secret it references, whether it still holds them or not: an
// Etcd that let go of them (reference changed, deletion finished) is exactly when they need a reconcile.
// Update events map both the old and the new object, so a replaced reference reaches the old secret too.
func referencedSecrets(_ context.Context, obj client.Object) []reconcile.Request {
	etcd, ok := obj.(*druidv1alpha1.Etcd)
	if !ok {
		return nil
	}
	var reqs []reconcile.Request
	for _, ref := range secretref.Of(etcd) {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}})
	}
	return reqs
}

// secretReferencesChanged lets through Etcd updates that change what the Etcd holds, and skips the frequent
// status updates of the Etcd controller.
func secretReferencesChanged() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		oldEtcd, okOld := e.ObjectOld.(*druidv1alpha1.Etcd)
		newEtcd, okNew := e.ObjectNew.(*druidv1alpha1.Etcd)
		if !okOld || !okNew {
			return true
		}
		return !slices.Equal(secretref.IndexValues(oldEtcd), secretref.IndexValues(newEtcd))
	}}
}

// finalizerOrDeletionChanged lets through Secret updates that touch what the controller decides about: the
// finalizers (someone removed druid's by hand) and the deletion timestamp. Data changes (certificate
// renewals) do not matter here.
func finalizerOrDeletionChanged() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		return !slices.Equal(e.ObjectOld.GetFinalizers(), e.ObjectNew.GetFinalizers()) ||
			!e.ObjectOld.GetDeletionTimestamp().Equal(e.ObjectNew.GetDeletionTimestamp())
	}}
}
