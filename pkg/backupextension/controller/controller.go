// Package controller is the skeleton the BackupBucket and BackupEntry controllers share, written once and
// generic over the extension resource: read the object, pick its provider by spec.type, and run the migrate,
// delete or reconcile operation (Create, Reconcile, Restore) through operation.Runner when gardenlet asked
// for one. A kind supplies only
// what differs — its accessors (Kind) and what an operation does with the provider (Actuator).
package controller

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/operation"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/provider"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/provider/builtin"
)

// Kind describes one extension resource to the skeleton.
type Kind[T client.Object] struct {
	// Name names the controller in logs, metrics and events.
	Name string
	// New returns an empty object to read into.
	New func() T
	// Finalizer keeps the object until its delete operation succeeded.
	Finalizer string
	// Status returns the object's common extension status.
	Status func(T) *extensionsv1alpha1.DefaultStatus
	// Type returns the object's provider type (spec.type).
	Type func(T) string
	// LogValues are the key/value pairs every log line of a reconcile carries.
	LogValues func(T) []any
	// Incomplete tells whether an object whose last operation succeeded still waits for something outside
	// it (a BackupEntry for its shoot namespace), so that an event of a further Watch reconciles it again
	// although nothing asks for it (operation.NeedsReconcile). Optional.
	Incomplete func(T) bool
}

func (k Kind[T]) incomplete(obj T) bool { return k.Incomplete != nil && k.Incomplete(obj) }

// Actuator is what an operation does for one kind with the object's provider. The runner records the
// outcome; an Ensure may set status fields, which are written together with it.
type Actuator[T client.Object] interface {
	// Ensure creates or updates what the object stands for; it serves Create, Reconcile and Restore.
	Ensure(ctx context.Context, obj T, p provider.Provider) error
	// Delete removes what the object stands for, in the cluster and in the store.
	Delete(ctx context.Context, obj T, p provider.Provider) error
	// Migrate hands the object over to another seed (the source side of a control-plane migration). It must
	// not delete anything outside the cluster — the migrated object is deleted next, and its backups must
	// survive for the destination seed.
	Migrate(ctx context.Context, obj T, p provider.Provider) error
}

// Options are the settings every extension controller has.
type Options struct {
	// Providers are the provider types the controller handles (the built-in local and s3 when nil).
	Providers provider.Registry
	// LocalRoot is the default directory of local buckets, used when Providers is nil.
	LocalRoot string
	// MaxConcurrentReconciles bounds parallel reconciles (1 when zero).
	MaxConcurrentReconciles int
}

func (o Options) withDefaults() Options {
	if o.Providers == nil {
		o.Providers = builtin.Providers(o.LocalRoot)
	}
	if o.MaxConcurrentReconciles == 0 {
		o.MaxConcurrentReconciles = 1
	}
	return o
}

// Watch is a further source of reconcile requests beside the kind's own objects.
type Watch struct {
	Object     client.Object
	Handler    handler.EventHandler
	Predicates []predicate.Predicate
}

// Add registers the controller of a kind with the manager. It reacts only to what gardenlet uses to ask for
// an operation (operation.TriggerPredicate) and only to the provider types in opts.Providers, so that
// several backup extensions can share a seed.
func Add[T client.Object](mgr manager.Manager, kind Kind[T], actuator Actuator[T], opts Options, watches ...Watch) error {
	opts = opts.withDefaults()
	r := &reconciler[T]{
		client:    mgr.GetClient(),
		kind:      kind,
		actuator:  actuator,
		providers: opts.Providers,
		runner: &operation.Runner[T]{
			Client:    mgr.GetClient(),
			Recorder:  mgr.GetEventRecorder(kind.Name),
			Finalizer: kind.Finalizer,
			Status:    kind.Status,
		},
	}
	typeOf := func(obj client.Object) string { return kind.Type(obj.(T)) }
	b := ctrl.NewControllerManagedBy(mgr).
		Named(kind.Name).
		For(kind.New(), builder.WithPredicates(
			operation.TriggerPredicate(),
			operation.TypePredicate(typeOf, opts.Providers.Supports),
		))
	for _, w := range watches {
		b = b.Watches(w.Object, w.Handler, builder.WithPredicates(w.Predicates...))
	}
	return b.WithOptions(crcontroller.Options{MaxConcurrentReconciles: opts.MaxConcurrentReconciles, RateLimiter: operation.RateLimiter()}).
		Complete(r)
}

// reconciler is the reconcile loop of every kind.
type reconciler[T client.Object] struct {
	// client reads the kind's objects from the cache.
	client    client.Client
	kind      Kind[T]
	actuator  Actuator[T]
	providers provider.Registry
	runner    *operation.Runner[T]
}

// Reconcile runs the operation operation.Type computes: migrate (annotation `migrate`, even on an object being
// deleted), delete for an object being deleted (also one annotated `restore`), and the reconcile operation (Create, Reconcile or Restore) of
// any other object that needs one (operation.NeedsReconcile) or is incomplete (Kind.Incomplete). A migrated object is left alone unless gardenlet
// asks to restore it (operation.Skip), and so are objects of another provider type.
func (r *reconciler[T]) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	obj := r.kind.New()
	if err := r.client.Get(ctx, req.NamespacedName, obj); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	ctx = logf.IntoContext(ctx, logf.FromContext(ctx).WithValues(r.kind.LogValues(obj)...))
	p, ok := r.providers[r.kind.Type(obj)]
	if !ok {
		return reconcile.Result{}, nil
	}
	status := r.kind.Status(obj)
	opType := operation.Type(obj, status)
	switch {
	case operation.Skip(opType, status):
		logf.FromContext(ctx).V(1).Info("Leaving a migrated object alone", "operation", opType)
		return reconcile.Result{}, nil
	case opType == extensionsv1alpha1.LastOperationTypeMigrate:
		return r.runner.Migrate(ctx, obj, func(ctx context.Context) error { return r.actuator.Migrate(ctx, obj, p) })
	case obj.GetDeletionTimestamp() != nil: // also when gardenlet asks to restore an object being deleted
		return r.runner.Delete(ctx, obj, func(ctx context.Context) error { return r.actuator.Delete(ctx, obj, p) })
	case !operation.NeedsReconcile(obj, status, r.kind.Finalizer) && !r.kind.incomplete(obj):
		return reconcile.Result{}, nil
	}
	return r.runner.Reconcile(ctx, obj, func(ctx context.Context) error { return r.actuator.Ensure(ctx, obj, p) })
}
