package operation

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
)

// Runner runs the operations of one extension kind — reconcile (Create, Reconcile, Restore), delete and
// migrate — with the conventions of the package: finalizer, lastOperation/lastError, observedGeneration,
// operation annotation, events (Normal on success, Warning on failure).
type Runner[T client.Object] struct {
	// Client writes the object, its status and its finalizer.
	Client client.Client
	// Recorder emits an event on every finished operation, where an operator looking at the object sees it.
	Recorder recorder.EventRecorder
	// Finalizer keeps the object until its delete or migrate operation succeeded.
	Finalizer string
	// Status returns the common status of the object.
	Status func(T) *extensionsv1alpha1.DefaultStatus
	// Now is the clock of the status timestamps (time.Now when nil).
	Now func() time.Time
}

func (r *Runner[T]) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// Reconcile runs do as the operation Type computes for an object that is not being deleted or migrated:
// Create until a first one succeeded, Restore when gardenlet asked for one with the annotation `restore`
// (the destination seed of a control-plane migration, or a migration rolled back), Reconcile otherwise. do may
// change the object's status; the runner writes it together with the outcome, and removes the annotation
// `reconcile` or `restore` after a success.
func (r *Runner[T]) Reconcile(ctx context.Context, obj T, do func(context.Context) error) (reconcile.Result, error) {
	requested := OperationOf(obj)
	if requested != extensionsv1alpha1.OperationReconcile && requested != extensionsv1alpha1.OperationRestore {
		requested = ""
	}
	if !controllerutil.ContainsFinalizer(obj, r.Finalizer) {
		patch := client.MergeFromWithOptions(obj.DeepCopyObject().(T), client.MergeFromWithOptimisticLock{})
		controllerutil.AddFinalizer(obj, r.Finalizer)
		if err := r.Client.Patch(ctx, obj, patch); err != nil {
			return reconcile.Result{}, fmt.Errorf("adding finalizer: %w", err)
		}
	}
	opType := Type(obj, r.Status(obj))
	verb, done := "Reconciling ", " reconciled"
	if opType == extensionsv1alpha1.LastOperationTypeRestore {
		verb, done = "Restoring ", " restored"
	}
	if ok, result, err := r.execute(ctx, obj, opType, verb+obj.GetName(), obj.GetName()+done, do); !ok {
		return result, err
	}
	return reconcile.Result{}, RemoveOperationAnnotation(ctx, r.Client, obj, requested)
}

// execute runs do as an operation of opType that ends in a recorded success: Processing, do, Succeeded for
// the object's generation (written together with what do put into the status) and a Normal event. A
// failure is recorded by fail, whose result and error execute returns with ok false.
func (r *Runner[T]) execute(ctx context.Context, obj T, opType extensionsv1alpha1.LastOperationType, processing, succeeded string,
	do func(context.Context) error) (ok bool, result reconcile.Result, err error) {
	if err := r.patchStatus(ctx, obj, func() { SetProcessing(r.Status(obj), opType, processing, r.now()) }); err != nil {
		return false, reconcile.Result{}, err
	}
	before := obj.DeepCopyObject().(T)
	if err := do(ctx); err != nil {
		result, err := r.fail(ctx, obj, before, opType, err)
		return false, result, err
	}
	patch := client.MergeFrom(before)
	SetSucceeded(r.Status(obj), opType, succeeded, obj.GetGeneration(), r.now())
	if err := r.Client.Status().Patch(ctx, obj, patch); err != nil {
		return false, reconcile.Result{}, fmt.Errorf("recording success: %w", err)
	}
	r.succeeded(ctx, obj, opType)
	return true, reconcile.Result{}, nil
}

// Delete runs do as a Delete operation and releases the finalizer once it succeeded.
func (r *Runner[T]) Delete(ctx context.Context, obj T, do func(context.Context) error) (reconcile.Result, error) {
	if !controllerutil.ContainsFinalizer(obj, r.Finalizer) {
		return reconcile.Result{}, nil
	}
	opType := extensionsv1alpha1.LastOperationTypeDelete
	if err := r.patchStatus(ctx, obj, func() { SetProcessing(r.Status(obj), opType, "Deleting "+obj.GetName(), r.now()) }); err != nil {
		return reconcile.Result{}, err
	}
	before := obj.DeepCopyObject().(T)
	if err := do(ctx); err != nil {
		return r.fail(ctx, obj, before, opType, err)
	}
	if err := r.removeFinalizer(ctx, obj); err != nil {
		return reconcile.Result{}, err
	}
	r.succeeded(ctx, obj, opType)
	return reconcile.Result{}, nil
}

// Migrate runs do as a Migrate operation, gardenlet's request (annotation `migrate`) on the source seed of a
// control-plane migration, which takes precedence over a deletion in progress: lastOperation Migrate
// Processing, do, Migrate Succeeded (observedGeneration set, lastError cleared), then the finalizer is
// released and the annotation removed — in this order, so that a migrated object never keeps the finalizer
// once nothing asks for the migration any more (Skip leaves a migrated object alone, its deletion too). do
// must not delete anything outside the cluster: gardenlet deletes the migrated object next, and its backups
// must survive for the destination seed. A repeated migrate of a migrated object only finishes the
// finalizer and annotation steps.
func (r *Runner[T]) Migrate(ctx context.Context, obj T, do func(context.Context) error) (reconcile.Result, error) {
	opType := extensionsv1alpha1.LastOperationTypeMigrate
	if !IsMigrated(r.Status(obj)) {
		if ok, result, err := r.execute(ctx, obj, opType, "Migrating "+obj.GetName(), obj.GetName()+" migrated", do); !ok {
			return result, err
		}
	}
	if controllerutil.ContainsFinalizer(obj, r.Finalizer) {
		if err := r.removeFinalizer(ctx, obj); err != nil {
			return reconcile.Result{}, err
		}
	}
	// Without the finalizer an object being deleted may be gone already; then there is nothing to acknowledge.
	return reconcile.Result{}, client.IgnoreNotFound(RemoveOperationAnnotation(ctx, r.Client, obj, extensionsv1alpha1.OperationMigrate))
}

func (r *Runner[T]) removeFinalizer(ctx context.Context, obj T) error {
	patch := client.MergeFromWithOptions(obj.DeepCopyObject().(T), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(obj, r.Finalizer)
	if err := r.Client.Patch(ctx, obj, patch); err != nil {
		return fmt.Errorf("removing finalizer: %w", err)
	}
	return nil
}

// succeeded logs a finished operation and records it as a Normal event.
func (r *Runner[T]) succeeded(ctx context.Context, obj T, opType extensionsv1alpha1.LastOperationType) {
	logf.FromContext(ctx).Info("Operation succeeded", "operation", opType)
	if r.Recorder != nil {
		r.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, string(opType)+"Succeeded", string(opType), "%s succeeded", opType)
	}
}

// patchStatus writes the start of an operation on the version of the object the decision was made on
// (optimistic lock): a reconcile working from a stale cache — one that would run Delete on an entry gardenlet
// has just asked to migrate, and so delete its backups — fails with a conflict before it acts, and is retried
// on the current object.
func (r *Runner[T]) patchStatus(ctx context.Context, obj T, mutate func()) error {
	patch := client.MergeFromWithOptions(obj.DeepCopyObject().(T), client.MergeFromWithOptimisticLock{})
	mutate()
	if err := r.Client.Status().Patch(ctx, obj, patch); err != nil {
		return fmt.Errorf("updating status: %w", err)
	}
	return nil
}

// fail records the error in the status and as an event; the error goes back to the work queue, which retries
// with exponential back-off (RateLimiter).
func (r *Runner[T]) fail(ctx context.Context, obj, before T, opType extensionsv1alpha1.LastOperationType, cause error) (reconcile.Result, error) {
	patch := client.MergeFrom(before)
	SetError(r.Status(obj), opType, cause, r.now())
	if err := r.Client.Status().Patch(ctx, obj, patch); err != nil {
		logf.FromContext(ctx).Error(err, "Recording the failure in the status failed")
	}
	if r.Recorder != nil {
		r.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, string(opType)+"Failed", string(opType), "%s", cause.Error())
	}
	return reconcile.Result{}, fmt.Errorf("%s of %s failed: %w", opType, obj.GetName(), cause)
}
