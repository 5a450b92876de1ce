// Package copybackupstask is druid's EtcdCopyBackupsTask controller: for each task it runs the Job
// `<task>-worker` executing `etcdbrctl copy` from the task's source store to its target store, and mirrors
// the Job's outcome into the task's status (conditions Succeeded and Failed, lastError, observedGeneration).
// Gardener creates such tasks during a control-plane migration and waits for Succeeded before it switches the
// Etcd to the new store. A finalizer on the task makes deleting it delete the Job (and so stop the copy).
package copybackupstask

import (
	"context"
	"fmt"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/coreevents"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/health"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/storeaccess"
	"github.com/gardener-etcd/gardener-etcd/pkg/webhook/etcdvalidation"
)

// Reasons of the task's conditions and events.
const (
	// ReasonJobRunning: the worker Job has not finished.
	ReasonJobRunning = "CopyJobRunning"
	// ReasonJobSucceeded: the worker Job completed.
	ReasonJobSucceeded = "CopyJobSucceeded"
	// ReasonJobFailed is used when the failed Job carries no reason of its own.
	ReasonJobFailed = "CopyJobFailed"
	// EventReasonJobFailed is a Warning event on the task: the migration waiting for it is stuck.
	EventReasonJobFailed = "CopyJobFailed"
	// ReasonLocalStoreRefused: druid will not mount a Local store of the task (a container or host path
	// outside the allowed directories), so no worker Job runs; the message names the path.
	ReasonLocalStoreRefused = "LocalStoreRefused"
	// EventReasonLocalStoreRefused is the Warning event of the same refusal.
	EventReasonLocalStoreRefused = ReasonLocalStoreRefused
	// ReasonInvalidSpec: the task's spec fails the checks of the validation webhook
	// (etcdvalidation.CopyTaskErrors), so no worker Job runs; the message names every field.
	ReasonInvalidSpec = "InvalidSpec"
	// EventReasonInvalidSpec is the Warning event of the same refusal.
	EventReasonInvalidSpec = ReasonInvalidSpec
)

// Reconciler handles one EtcdCopyBackupsTask per call.
type Reconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	Config   config.CopyBackupsTaskController
	Clock    clock.PassiveClock
}

// Reconcile implements reconcile.Reconciler for EtcdCopyBackupsTasks.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	logger := log.FromContext(ctx).WithValues("task", req.NamespacedName)
	ctx = log.IntoContext(ctx, logger)
	task := &druidv1alpha1.EtcdCopyBackupsTask{}
	if err := r.Client.Get(ctx, req.NamespacedName, task); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !task.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.delete(ctx, task)
	}
	if !controllerutil.ContainsFinalizer(task, druidv1alpha1.FinalizerName) {
		before := task.DeepCopy()
		controllerutil.AddFinalizer(task, druidv1alpha1.FinalizerName)
		if err := r.Client.Patch(ctx, task, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
			return ctrl.Result{}, fmt.Errorf("adding finalizer: %w", err)
		}
	}

	job := &batchv1.Job{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: task.Namespace, Name: WorkerJobName(task)}, job)
	switch {
	case apierrors.IsNotFound(err):
		if finished(task) {
			// Someone removed the Job of a finished task; the outcome is recorded, do not copy again.
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, r.createJob(ctx, task)
	case err != nil:
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, r.mirror(ctx, task, job)
}

// finished tells whether the task's outcome is recorded for its current generation.
func finished(task *druidv1alpha1.EtcdCopyBackupsTask) bool {
	if task.Status.ObservedGeneration == nil || *task.Status.ObservedGeneration != task.Generation {
		return false
	}
	for _, t := range []druidv1alpha1.ConditionType{druidv1alpha1.EtcdCopyBackupsTaskSucceeded, druidv1alpha1.EtcdCopyBackupsTaskFailed} {
		if c := druidv1alpha1.FindCondition(task.Status.Conditions, t); c != nil && c.Status == druidv1alpha1.ConditionTrue {
			return true
		}
	}
	return false
}

func (r *Reconciler) createJob(ctx context.Context, task *druidv1alpha1.EtcdCopyBackupsTask) error {
	if errs := etcdvalidation.CopyTaskErrors(task); len(errs) > 0 {
		return r.refuseInvalidSpec(ctx, task, errs)
	}
	var paths localStores
	var err error
	if paths.target, err = storeaccess.ResolveLocalStore(ctx, r.Client, &task.Spec.TargetStore, "spec.targetStore.container", task.Namespace,
		volumeTargetLocal, r.Config.LocalBackup); err != nil {
		return r.localStoreError(ctx, task, "target", err)
	}
	if paths.source, err = storeaccess.ResolveLocalStore(ctx, r.Client, &task.Spec.SourceStore, "spec.sourceStore.container", task.Namespace,
		volumeSourceLocal, r.Config.LocalBackup); err != nil {
		return r.localStoreError(ctx, task, "source", err)
	}
	if err := storeaccess.RefuseSharedMount(paths.target, paths.source); err != nil {
		return r.localStoreError(ctx, task, "source", err)
	}
	job := newJob(task, r.Config.BackupRestoreImage, paths)
	if err := r.Client.Create(ctx, job); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating worker job %s: %w", job.Name, err)
	}
	log.FromContext(ctx).Info("Created copy-backups worker job", "job", job.Name)
	return nil
}

// localStoreError returns err, unless it is a refusal of a Local store: the task then fails for its
// generation (Failed=True, lastError and a Warning event naming the path), since no retry can mount a
// directory the rules refuse; Gardener, waiting for Succeeded or Failed, learns it at once.
func (r *Reconciler) localStoreError(ctx context.Context, task *druidv1alpha1.EtcdCopyBackupsTask, which string, err error) error {
	if !storeaccess.IsLocalStoreRefused(err) {
		return err
	}
	message := fmt.Sprintf("no worker Job: the %s store: %v", which, err)
	log.FromContext(ctx).Info("Local store refused, no copy-backups worker job", "store", which, "reason", err.Error())
	return r.failWithoutJob(ctx, task, ReasonLocalStoreRefused, message)
}

// refuseInvalidSpec fails the task for its generation when its spec fails the validation webhook's checks
// (etcdvalidation.CopyTaskErrors): a deployment may register no validation webhook for copy tasks
// (gardenlet registers none), and a copy into another shoot's prefix or onto its own source must not run
// because of that. The fields come first in the message: an event's message is cut at 1024 bytes.
func (r *Reconciler) refuseInvalidSpec(ctx context.Context, task *druidv1alpha1.EtcdCopyBackupsTask, errs field.ErrorList) error {
	fields := make([]string, 0, len(errs))
	for _, e := range errs {
		if !slices.Contains(fields, e.Field) {
			fields = append(fields, e.Field)
		}
	}
	message := fmt.Sprintf("no worker Job: generation %d refused by validation (%s): %s", task.Generation, strings.Join(fields, ", "), errs.ToAggregate().Error())
	log.FromContext(ctx).Info("Spec refused by validation, no copy-backups worker job", "generation", task.Generation, "errors", errs.ToAggregate().Error())
	return r.failWithoutJob(ctx, task, ReasonInvalidSpec, message)
}

// failWithoutJob ends the task's generation without a worker Job: Succeeded=False and Failed=True with
// reason, lastError message and a Warning event of the same reason. A refusal no retry can change fails
// at once, since Gardener, waiting for Succeeded or Failed, would otherwise wait forever; a new spec
// (a new generation) is judged again.
func (r *Reconciler) failWithoutJob(ctx context.Context, task *druidv1alpha1.EtcdCopyBackupsTask, reason, message string) error {
	r.Recorder.Eventf(task, nil, corev1.EventTypeWarning, reason, "Copy", "%s", coreevents.TruncatedNote(message))
	before := task.DeepCopy()
	now := r.Clock.Now()
	task.Status.Conditions = health.SetCondition(task.Status.Conditions,
		condition(druidv1alpha1.EtcdCopyBackupsTaskSucceeded, druidv1alpha1.ConditionFalse, reason, message), now)
	task.Status.Conditions = health.SetCondition(task.Status.Conditions,
		condition(druidv1alpha1.EtcdCopyBackupsTaskFailed, druidv1alpha1.ConditionTrue, reason, message), now)
	task.Status.LastError = &message
	task.Status.ObservedGeneration = ptr.To(task.Generation)
	if err := r.Client.Status().Patch(ctx, task, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("recording %s in the task status: %w", reason, err)
	}
	return nil
}

// mirror writes the Job's state into the task's status: while it runs both conditions are False (reason
// CopyJobRunning); when it completed Succeeded is True; when it failed Failed is True and lastError carries
// the Job's message.
func (r *Reconciler) mirror(ctx context.Context, task *druidv1alpha1.EtcdCopyBackupsTask, job *batchv1.Job) error {
	succeeded := condition(druidv1alpha1.EtcdCopyBackupsTaskSucceeded, druidv1alpha1.ConditionFalse, ReasonJobRunning, "worker Job "+job.Name+" is running")
	failed := condition(druidv1alpha1.EtcdCopyBackupsTaskFailed, druidv1alpha1.ConditionFalse, ReasonJobRunning, "worker Job "+job.Name+" is running")
	var lastError *string
	if c := terminalCondition(job, batchv1.JobComplete); c != nil {
		succeeded = condition(druidv1alpha1.EtcdCopyBackupsTaskSucceeded, druidv1alpha1.ConditionTrue, ReasonJobSucceeded, "worker Job "+job.Name+" completed")
		failed = condition(druidv1alpha1.EtcdCopyBackupsTaskFailed, druidv1alpha1.ConditionFalse, ReasonJobSucceeded, "worker Job "+job.Name+" completed")
	} else if c := terminalCondition(job, batchv1.JobFailed); c != nil {
		reason := c.Reason
		if reason == "" {
			reason = ReasonJobFailed
		}
		message := fmt.Sprintf("worker Job %s failed: %s", job.Name, c.Message)
		succeeded = condition(druidv1alpha1.EtcdCopyBackupsTaskSucceeded, druidv1alpha1.ConditionFalse, reason, message)
		failed = condition(druidv1alpha1.EtcdCopyBackupsTaskFailed, druidv1alpha1.ConditionTrue, reason, message)
		lastError = &message
	}

	before := task.DeepCopy()
	now := r.Clock.Now()
	status := &task.Status
	if prev := druidv1alpha1.FindCondition(status.Conditions, druidv1alpha1.EtcdCopyBackupsTaskFailed); failed.Status == druidv1alpha1.ConditionTrue &&
		(prev == nil || prev.Status != druidv1alpha1.ConditionTrue) {
		log.FromContext(ctx).Info("Copy-backups worker job failed", "job", job.Name, "reason", failed.Reason)
		r.Recorder.Eventf(task, job, corev1.EventTypeWarning, EventReasonJobFailed, "Copy", "%s", failed.Message)
	}
	status.Conditions = health.SetCondition(status.Conditions, succeeded, now)
	status.Conditions = health.SetCondition(status.Conditions, failed, now)
	status.LastError = lastError
	status.ObservedGeneration = ptr.To(task.Generation)
	if equalIgnoringUpdateTime(before.Status, task.Status) {
		return nil // nothing changed: do not bump lastUpdateTime on every Job event
	}
	if err := r.Client.Status().Patch(ctx, task, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("mirroring the worker job into the task status: %w", err)
	}
	return nil
}

// delete removes the worker Job (with its pods, in the background) and then the task's finalizer.
func (r *Reconciler) delete(ctx context.Context, task *druidv1alpha1.EtcdCopyBackupsTask) error {
	if !controllerutil.ContainsFinalizer(task, druidv1alpha1.FinalizerName) {
		return nil
	}
	job := &batchv1.Job{}
	job.Name, job.Namespace = WorkerJobName(task), task.Namespace
	if err := r.Client.Delete(ctx, job, client.PropagationPolicy("Background")); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting worker job %s: %w", job.Name, err)
	}
	before := task.DeepCopy()
	controllerutil.RemoveFinalizer(task, druidv1alpha1.FinalizerName)
	if err := r.Client.Patch(ctx, task, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("removing finalizer: %w", err)
	}
	log.FromContext(ctx).Info("Deleted copy-backups task and its worker job", "job", job.Name)
	return nil
}

func condition(t druidv1alpha1.ConditionType, s druidv1alpha1.ConditionStatus, reason, message string) druidv1alpha1.Condition {
	return druidv1alpha1.Condition{Type: t, Status: s, Reason: reason, Message: message}
}

// terminalCondition returns the Job's condition of type t when it is True.
func terminalCondition(job *batchv1.Job, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range job.Status.Conditions {
		if c := &job.Status.Conditions[i]; c.Type == t && c.Status == corev1.ConditionTrue {
			return c
		}
	}
	return nil
}

// equalIgnoringUpdateTime compares two statuses as if every condition's lastUpdateTime were equal.
func equalIgnoringUpdateTime(a, b druidv1alpha1.EtcdCopyBackupsTaskStatus) bool {
	strip := func(s druidv1alpha1.EtcdCopyBackupsTaskStatus) druidv1alpha1.EtcdCopyBackupsTaskStatus {
		s = *s.DeepCopy()
		for i := range s.Conditions {
			s.Conditions[i].LastUpdateTime = s.Conditions[i].LastTransitionTime
		}
		return s
	}
	return apiequality.Semantic.DeepEqual(strip(a), strip(b))
}
