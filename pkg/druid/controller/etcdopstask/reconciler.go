// Package etcdopstask is druid's EtcdOpsTask controller. It runs each task once, through the states of the
// upstream API: a new task becomes Pending; admission checks its preconditions (a task druid runs, no other
// unfinished task of the same Etcd, the Etcd exists, is ready, has a backup store and a client certificate
// for the sidecar) and marks it Rejected when one fails; an admitted task is InProgress while the backup
// leader's sidecar takes the snapshot (the same client, fullsnapshot.HTTP, druid asks for the snapshot
// before hibernation with), then Succeeded or Failed. A finished task is deleted ttlSecondsAfterFinished
// after its last transition (the reconcile is requeued for that moment; nothing sleeps).
//
// Only on-demand snapshots (full, final full, delta) run here; the upstream API's other task kinds are
// rejected with ERR_UNSUPPORTED_TASK_TYPE.
package etcdopstask

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1/validation"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/fullsnapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
)

// Error codes in status.lastErrors. The first six are upstream druid's; the rest are ours.
const (
	ErrDuplicateTask      druidv1alpha1.ErrorCode = "ERR_DUPLICATE_TASK"
	ErrGetEtcd            druidv1alpha1.ErrorCode = "ERR_GET_ETCD"
	ErrEtcdNotReady       druidv1alpha1.ErrorCode = "ERR_ETCD_NOT_READY"
	ErrBackupNotEnabled   druidv1alpha1.ErrorCode = "ERR_BACKUP_NOT_ENABLED"
	ErrExecuteHTTPRequest druidv1alpha1.ErrorCode = "ERR_EXECUTE_HTTP_REQUEST"
	ErrCreateSnapshot     druidv1alpha1.ErrorCode = "ERR_CREATE_SNAPSHOT"
	// ErrInvalidTask: a task validation refuses (stored while the validation webhook was off).
	ErrInvalidTask druidv1alpha1.ErrorCode = "ERR_INVALID_TASK"
	// ErrNoClientCertificate: the Etcd's spec.backup.tls names no client certificate druid could present.
	ErrNoClientCertificate druidv1alpha1.ErrorCode = "ERR_NO_CLIENT_CERTIFICATE"
	// ErrTooFrequent: a task of the same kind of the same Etcd started less than MinInterval ago, or one of
	// any kind less than half of it (ratelimit.go).
	ErrTooFrequent druidv1alpha1.ErrorCode = "ERR_TOO_FREQUENT"
)

// Reasons of the events on a task.
const (
	EventReasonRejected          = "EtcdOpsTaskRejected"
	EventReasonSnapshotStarted   = "OnDemandSnapshotStarted"
	EventReasonSnapshotSucceeded = "OnDemandSnapshotSucceeded"
	EventReasonSnapshotFailed    = "OnDemandSnapshotFailed"
)

// UpstreamFinalizer is the finalizer upstream druid puts on the tasks it runs. This druid needs none
// (an on-demand snapshot leaves nothing to clean up) but removes it from a task being deleted, so that
// tasks an upstream druid left behind can go.
const UpstreamFinalizer = "etcd-druid.gardener.cloud/etcd-operator-task"

// Snapshotter asks an Etcd's backup leader for a snapshot and returns the sidecar's answer
// (fullsnapshot.HTTP).
type Snapshotter interface {
	Snapshot(ctx context.Context, etcd *druidv1alpha1.Etcd, req fullsnapshot.Request) ([]byte, error)
}

// Reconciler runs EtcdOpsTasks, one call per task.
type Reconciler struct {
	// Client writes the task's status and deletes finished tasks; Etcds are read through it.
	Client client.Client
	// Reader reads tasks from the apiserver: a reconcile must not act on a task state older than its own
	// last write (a snapshot would be taken twice), nor miss a task just created for the same Etcd.
	Reader    client.Reader
	Recorder  events.EventRecorder
	Snapshots Snapshotter
	Clock     clock.PassiveClock
	// RetryInterval is the wait before a request that did not reach the sidecar is sent again.
	RetryInterval time.Duration
	// MinInterval is the least time between the starts of two tasks of the same kind of one Etcd; between
	// tasks of any kind of one Etcd it is half of it (ratelimit.go).
	MinInterval time.Duration

	// admitting serializes admissions: the check for another unfinished task of the same Etcd and the
	// write that starts this one are one step, so two tasks created together and admitted by two workers
	// cannot both start (druid runs as one leader, so a process-local lock covers every admission).
	admitting sync.Mutex
	// started remembers when a task of a kind of an Etcd last started within the last MinInterval, for
	// tasks deleted (TTL) before the intervals passed (recordStart); guarded by admitting.
	started map[startKey]time.Time
}

// Reconcile implements reconcile.Reconciler for EtcdOpsTasks.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	logger := log.FromContext(ctx).WithValues("task", req.NamespacedName)
	ctx = log.IntoContext(ctx, logger)
	task := &druidv1alpha1.EtcdOpsTask{}
	if err := r.Reader.Get(ctx, req.NamespacedName, task); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !task.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.releaseUpstreamFinalizer(ctx, task)
	}
	if task.IsCompleted() {
		return r.expire(ctx, task)
	}
	if task.Status.State == nil {
		if err := r.update(ctx, task, func(s *druidv1alpha1.EtcdOpsTaskStatus) {
			r.setState(s, druidv1alpha1.TaskStatePending)
		}); err != nil {
			return ctrl.Result{}, err
		}
	}
	if *task.Status.State == druidv1alpha1.TaskStatePending {
		admitted, err := r.admit(ctx, task)
		if err != nil || !admitted {
			return r.requeueForExpiry(task), err
		}
	}
	return r.execute(ctx, task)
}

// admit checks the preconditions of a Pending task. A task that fails one is Rejected (admitted false,
// no error); an error means the check itself failed and is retried.
func (r *Reconciler) admit(ctx context.Context, task *druidv1alpha1.EtcdOpsTask) (bool, error) {
	if err := r.update(ctx, task, func(s *druidv1alpha1.EtcdOpsTaskStatus) {
		setOperation(s, druidv1alpha1.LastOperationTypeAdmit, druidv1alpha1.LastOperationStateInProgress, "checking the task's preconditions", runID(ctx), r.Clock.Now())
	}); err != nil {
		return false, err
	}
	reject := func(code druidv1alpha1.ErrorCode, etcd *druidv1alpha1.Etcd, format string, args ...any) (bool, error) {
		message := fmt.Sprintf(format, args...)
		log.FromContext(ctx).Info("Rejected EtcdOpsTask", "code", code, "reason", message)
		err := r.update(ctx, task, func(s *druidv1alpha1.EtcdOpsTaskStatus) {
			now := r.Clock.Now()
			addError(s, code, message, now)
			setOperation(s, druidv1alpha1.LastOperationTypeAdmit, druidv1alpha1.LastOperationStateFailed, message, runID(ctx), now)
			r.setState(s, druidv1alpha1.TaskStateRejected)
		})
		if err == nil {
			r.event(task, etcd, corev1.EventTypeWarning, EventReasonRejected, "Admit", "%s: %s", code, message)
		}
		return false, err
	}

	r.admitting.Lock()
	defer r.admitting.Unlock()
	if errs := validation.ValidateEtcdOpsTask(task); len(errs) > 0 {
		return reject(ErrInvalidTask, nil, "%s", errs.ToAggregate().Error())
	}
	if other, err := r.blockingTask(ctx, task); err != nil {
		return false, err
	} else if other != nil {
		return reject(ErrDuplicateTask, nil, "EtcdOpsTask %s for Etcd %s/%s is not finished yet (state %s); one task per Etcd runs at a time, create this one again once it finished",
			other.Name, task.Namespace, *task.Spec.EtcdName, stateOf(other))
	}
	etcd := &druidv1alpha1.Etcd{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: task.Namespace, Name: *task.Spec.EtcdName}, etcd); apierrors.IsNotFound(err) {
		return reject(ErrGetEtcd, nil, "Etcd %s/%s does not exist", task.Namespace, *task.Spec.EtcdName)
	} else if err != nil {
		return false, fmt.Errorf("reading Etcd %s/%s: %w", task.Namespace, *task.Spec.EtcdName, err)
	}
	// The validation webhook refuses such a task at creation; one stored while it was off is rejected here.
	if errs := validation.ValidateEtcdOpsTaskForEtcd(task, etcd); len(errs) > 0 {
		return reject(ErrInvalidTask, etcd, "%s", errs.ToAggregate().Error())
	}
	if etcd.Spec.Backup.Store == nil {
		return reject(ErrBackupNotEnabled, etcd, "Etcd %s has no backup store (spec.backup.store): there is nothing to take a snapshot to", etcd.Name)
	}
	if reason := notReady(etcd); reason != "" {
		return reject(ErrEtcdNotReady, etcd, "Etcd %s is not ready: %s", etcd.Name, reason)
	}
	if tls := etcd.Spec.Backup.TLS; tls == nil || tls.ClientTLSSecretRef.Name == "" {
		return reject(ErrNoClientCertificate, etcd, "Etcd %s: %s", etcd.Name, fullsnapshot.ErrNoClientCertificate.Error())
	}
	// Last: the rate limit only says "later", every check above says what is wrong.
	if other, from, err := r.recentTask(ctx, task); err != nil {
		return false, err
	} else if !from.IsZero() {
		return reject(ErrTooFrequent, etcd, "EtcdOpsTask %s started %s of Etcd %s at %s; an Etcd starts at most one task per %s and one of each kind per %s, create this one again after %s",
			other.task, other.kind, etcd.Name, other.at.UTC().Format(time.RFC3339), etcdInterval(r.MinInterval), r.MinInterval, from.UTC().Format(time.RFC3339))
	}

	snapshotConfig := task.Spec.Config.OnDemandSnapshot
	if err := r.update(ctx, task, func(s *druidv1alpha1.EtcdOpsTaskStatus) {
		now := r.Clock.Now()
		setOperation(s, druidv1alpha1.LastOperationTypeExecution, druidv1alpha1.LastOperationStateInProgress,
			fmt.Sprintf("taking %s of Etcd %s", describe(snapshotConfig), etcd.Name), runID(ctx), now)
		r.setState(s, druidv1alpha1.TaskStateInProgress)
	}); err != nil {
		return false, err
	}
	if r.MinInterval > 0 {
		if r.started == nil {
			r.started = map[startKey]time.Time{}
		}
		// The stored start (in seconds), so that the remembered start is the same as the stored task's.
		recordStart(r.started, client.ObjectKey{Namespace: task.Namespace, Name: *task.Spec.EtcdName}, describe(snapshotConfig), task.Status.StartedAt.Time, r.MinInterval)
	}
	r.event(task, etcd, corev1.EventTypeNormal, EventReasonSnapshotStarted, "Execute", "Taking %s of Etcd %s (timeout %s)", describe(snapshotConfig), etcd.Name, druidv1alpha1.OnDemandSnapshotTimeout(snapshotConfig))
	return true, nil
}

// blockingTask is an unfinished task of the same Etcd that goes first: one already InProgress, or one created
// earlier (by creation time, then name). So of several tasks created together exactly one runs, whichever
// of them is reconciled first.
func (r *Reconciler) blockingTask(ctx context.Context, task *druidv1alpha1.EtcdOpsTask) (*druidv1alpha1.EtcdOpsTask, error) {
	tasks := &druidv1alpha1.EtcdOpsTaskList{}
	if err := r.Reader.List(ctx, tasks, client.InNamespace(task.Namespace)); err != nil {
		return nil, fmt.Errorf("listing the EtcdOpsTasks of namespace %s: %w", task.Namespace, err)
	}
	for i := range tasks.Items {
		other := &tasks.Items[i]
		if other.UID == task.UID || ptr.Deref(other.Spec.EtcdName, "") != *task.Spec.EtcdName || other.IsCompleted() || !other.DeletionTimestamp.IsZero() {
			continue
		}
		if stateOf(other) == druidv1alpha1.TaskStateInProgress || earlier(other, task) {
			return other, nil
		}
	}
	return nil, nil
}

// recentTask is the start of a task of the same Etcd that keeps task back (tooSoon), and from when task
// may start (zero time: now). It looks at the stored tasks (also finished ones, kept for their TTL) and
// at the starts this druid remembers of tasks deleted since.
func (r *Reconciler) recentTask(ctx context.Context, task *druidv1alpha1.EtcdOpsTask) (taskStart, time.Time, error) {
	if r.MinInterval <= 0 || task.Spec.Config.OnDemandSnapshot == nil {
		return taskStart{}, time.Time{}, nil
	}
	tasks := &druidv1alpha1.EtcdOpsTaskList{}
	if err := r.Reader.List(ctx, tasks, client.InNamespace(task.Namespace)); err != nil {
		return taskStart{}, time.Time{}, fmt.Errorf("listing the EtcdOpsTasks of namespace %s: %w", task.Namespace, err)
	}
	// The stored tasks first: of two equal starts, tooSoon names the first, and a remembered start is the
	// stored one's as long as that task exists.
	var starts []taskStart
	for i := range tasks.Items {
		if other := &tasks.Items[i]; other.UID != task.UID {
			if s, ok := startOf(other); ok {
				starts = append(starts, s)
			}
		}
	}
	starts = append(starts, rememberedStarts(r.started)...)
	etcd := client.ObjectKey{Namespace: task.Namespace, Name: *task.Spec.EtcdName}
	blocking, from, _ := tooSoon(starts, etcd, describe(task.Spec.Config.OnDemandSnapshot), r.Clock.Now(), r.MinInterval)
	return blocking, from, nil
}

func earlier(a, b *druidv1alpha1.EtcdOpsTask) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	return a.Name < b.Name
}

// notReady says why an Etcd cannot take a snapshot now, or "" when it can: it runs members
// (spec.replicas > 0) and its status says ready (every member ready and rolled out).
func notReady(etcd *druidv1alpha1.Etcd) string {
	switch {
	case etcd.Spec.Replicas == 0:
		return "it is hibernated (spec.replicas is 0)"
	case !ptr.Deref(etcd.Status.Ready, false):
		if c := druidv1alpha1.FindCondition(etcd.Status.Conditions, druidv1alpha1.ConditionTypeReady); c != nil && c.Status != druidv1alpha1.ConditionTrue {
			return fmt.Sprintf("condition Ready is %s (%s)", c.Status, c.Reason)
		}
		return "status.ready is not true"
	}
	return ""
}

// execute asks the sidecar for the snapshot of an InProgress task and records the outcome. A request
// that did not reach the sidecar is retried after RetryInterval until the task's timeout (counted from
// status.startedAt) is used up; an answer other than 200 fails the task at once.
func (r *Reconciler) execute(ctx context.Context, task *druidv1alpha1.EtcdOpsTask) (ctrl.Result, error) {
	config := task.Spec.Config.OnDemandSnapshot
	fail := func(code druidv1alpha1.ErrorCode, etcd *druidv1alpha1.Etcd, message string) (ctrl.Result, error) {
		message = boundedMessage(message)
		log.FromContext(ctx).Info("EtcdOpsTask failed", "code", code, "reason", message)
		if err := r.recordOutcome(ctx, task, func(s *druidv1alpha1.EtcdOpsTaskStatus) {
			now := r.Clock.Now()
			addError(s, code, message, now)
			setOperation(s, druidv1alpha1.LastOperationTypeExecution, druidv1alpha1.LastOperationStateFailed, message, runID(ctx), now)
			r.setState(s, druidv1alpha1.TaskStateFailed)
		}); err != nil {
			return ctrl.Result{}, err
		}
		r.event(task, etcd, corev1.EventTypeWarning, EventReasonSnapshotFailed, "Execute", "%s: %s", code, message)
		return r.requeueForExpiry(task), nil
	}

	if config == nil || task.Spec.EtcdName == nil {
		return fail(ErrInvalidTask, nil, "the task names no Etcd or no onDemandSnapshot")
	}
	etcd := &druidv1alpha1.Etcd{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: task.Namespace, Name: *task.Spec.EtcdName}, etcd); apierrors.IsNotFound(err) {
		return fail(ErrGetEtcd, nil, fmt.Sprintf("Etcd %s/%s was deleted before the snapshot was taken", task.Namespace, *task.Spec.EtcdName))
	} else if err != nil {
		return ctrl.Result{}, fmt.Errorf("reading Etcd %s/%s: %w", task.Namespace, *task.Spec.EtcdName, err)
	}
	druidv1alpha1.SetDefaults(etcd)

	started := r.Clock.Now()
	if task.Status.StartedAt != nil {
		started = task.Status.StartedAt.Time
	}
	remaining := started.Add(druidv1alpha1.OnDemandSnapshotTimeout(config)).Sub(r.Clock.Now())
	if remaining <= 0 {
		return fail(ErrExecuteHTTPRequest, etcd, fmt.Sprintf("%s was not taken within %s (timeout): %s", describe(config), druidv1alpha1.OnDemandSnapshotTimeout(config), lastErrorOf(task)))
	}
	kind := podwire.SnapshotFull
	if config.Type == druidv1alpha1.OnDemandSnapshotTypeDelta {
		kind = podwire.SnapshotIncr
	}
	body, err := r.Snapshots.Snapshot(ctx, etcd, fullsnapshot.Request{Kind: kind, Final: ptr.Deref(config.IsFinal, false), Timeout: remaining})
	var answer *fullsnapshot.AnswerError
	switch {
	case errors.As(err, &answer) && answer.Code != http.StatusServiceUnavailable:
		return fail(ErrCreateSnapshot, etcd, fmt.Sprintf("the backup-restore sidecar did not take %s: %s", describe(config), err))
	case err != nil:
		if r.Clock.Now().Add(r.RetryInterval).After(started.Add(druidv1alpha1.OnDemandSnapshotTimeout(config))) {
			return fail(ErrExecuteHTTPRequest, etcd, fmt.Sprintf("%s was not taken within %s (timeout): %s", describe(config), druidv1alpha1.OnDemandSnapshotTimeout(config), err))
		}
		// Not reached, or 503: the sidecar cannot take it yet (it does not know the backup leader, e.g. right
		// after its member restarted); asked again until the task's timeout.
		log.FromContext(ctx).Info("Snapshot request not served yet; retrying", "error", err.Error(), "retryAfter", r.RetryInterval)
		if uerr := r.update(ctx, task, func(s *druidv1alpha1.EtcdOpsTaskStatus) {
			now := r.Clock.Now()
			addError(s, ErrExecuteHTTPRequest, err.Error(), now)
			setOperation(s, druidv1alpha1.LastOperationTypeExecution, druidv1alpha1.LastOperationStateInProgress,
				fmt.Sprintf("retrying %s in %s: %s", describe(config), r.RetryInterval, err), runID(ctx), now)
		}); uerr != nil {
			return ctrl.Result{}, uerr
		}
		return ctrl.Result{RequeueAfter: r.RetryInterval}, nil
	}

	taken := fullsnapshot.ParseAny(body)
	message := fmt.Sprintf("took %s", describe(config))
	switch {
	case taken != nil && taken.Name != nil:
		message = fmt.Sprintf("took %s: %s (revision %d)", describe(config), *taken.Name, taken.EndRevision)
	case taken != nil:
		message = fmt.Sprintf("took %s at revision %d", describe(config), taken.EndRevision)
	case strings.TrimSpace(string(body)) == "null":
		message = "took no delta snapshot: nothing changed since the last snapshot"
	}
	if err := r.recordOutcome(ctx, task, func(s *druidv1alpha1.EtcdOpsTaskStatus) {
		setOperation(s, druidv1alpha1.LastOperationTypeExecution, druidv1alpha1.LastOperationStateCompleted, message, runID(ctx), r.Clock.Now())
		r.setState(s, druidv1alpha1.TaskStateSucceeded)
	}); err != nil {
		return ctrl.Result{}, err
	}
	log.FromContext(ctx).Info("EtcdOpsTask succeeded", "result", message)
	r.event(task, etcd, corev1.EventTypeNormal, EventReasonSnapshotSucceeded, "Execute", "Etcd %s: %s", etcd.Name, message)
	if ptr.Deref(config.IsFinal, false) {
		r.useUpFinalSnapshotDeclaration(ctx, task, etcd)
	}
	return r.requeueForExpiry(task), nil
}

// useUpFinalSnapshotDeclaration removes validation.FinalSnapshotAllowedAnnotation from the Etcd once the
// final snapshot it admitted was taken: the declaration that the clients are stopped is for that shutdown
// or migration, and a cluster woken up afterwards runs with clients again, so that a final snapshot task
// of it must be refused until someone declares anew. The snapshot is taken and recorded whatever happens
// here; should the annotation not go (apiserver away for the whole back-off), a Warning event on the task
// says to remove it by hand.
func (r *Reconciler) useUpFinalSnapshotDeclaration(ctx context.Context, task *druidv1alpha1.EtcdOpsTask, etcd *druidv1alpha1.Etcd) {
	key := client.ObjectKeyFromObject(etcd)
	err := retry.OnError(retry.DefaultBackoff, func(error) bool { return true }, func() error {
		current := &druidv1alpha1.Etcd{}
		if err := r.Reader.Get(ctx, key, current); err != nil {
			return client.IgnoreNotFound(err)
		}
		if _, ok := current.Annotations[validation.FinalSnapshotAllowedAnnotation]; !ok {
			return nil
		}
		before := current.DeepCopy()
		delete(current.Annotations, validation.FinalSnapshotAllowedAnnotation)
		return client.IgnoreNotFound(r.Client.Patch(ctx, current, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})))
	})
	if err != nil {
		log.FromContext(ctx).Error(err, "Could not remove the final snapshot declaration from the Etcd", "annotation", validation.FinalSnapshotAllowedAnnotation)
		r.event(task, etcd, corev1.EventTypeWarning, EventReasonSnapshotSucceeded, "Execute",
			"Etcd %s: the final snapshot was taken, but annotation %s could not be removed (%v): remove it before the cluster runs with clients again",
			etcd.Name, validation.FinalSnapshotAllowedAnnotation, err)
		return
	}
	log.FromContext(ctx).Info("Removed the final snapshot declaration from the Etcd: it admitted this final snapshot", "annotation", validation.FinalSnapshotAllowedAnnotation)
}

// expire deletes a finished task whose TTL ran out, or requeues it for that moment.
func (r *Reconciler) expire(ctx context.Context, task *druidv1alpha1.EtcdOpsTask) (ctrl.Result, error) {
	if druidv1alpha1.OpsTaskExpiresAt(task).After(r.Clock.Now()) {
		return r.requeueForExpiry(task), nil
	}
	log.FromContext(ctx).Info("Deleting finished EtcdOpsTask, its TTL ran out", "state", stateOf(task), "ttl", druidv1alpha1.OpsTaskTTLAfterFinished(task))
	err := r.Client.Delete(ctx, task, client.Preconditions{UID: &task.UID, ResourceVersion: &task.ResourceVersion})
	return ctrl.Result{}, client.IgnoreNotFound(err)
}

// requeueForExpiry is the result that brings a finished task back when its TTL runs out (none for a task
// that has not finished).
func (r *Reconciler) requeueForExpiry(task *druidv1alpha1.EtcdOpsTask) ctrl.Result {
	if !task.IsCompleted() {
		return ctrl.Result{}
	}
	return ctrl.Result{RequeueAfter: max(druidv1alpha1.OpsTaskExpiresAt(task).Sub(r.Clock.Now()), time.Millisecond)}
}

// releaseUpstreamFinalizer removes upstream druid's finalizer from a task being deleted.
func (r *Reconciler) releaseUpstreamFinalizer(ctx context.Context, task *druidv1alpha1.EtcdOpsTask) error {
	if !controllerutil.ContainsFinalizer(task, UpstreamFinalizer) {
		return nil
	}
	before := task.DeepCopy()
	controllerutil.RemoveFinalizer(task, UpstreamFinalizer)
	return client.IgnoreNotFound(r.Client.Patch(ctx, task, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})))
}

// recordOutcome writes the end of a task (Succeeded or Failed). Unlike update it does not give up on a
// conflict: the snapshot has been asked for, and a retried reconcile would ask for it again (a second
// final snapshot, minutes of work). It reads the task again and applies mutate to that, as long as the task
// is still in progress; only this controller writes the status.
func (r *Reconciler) recordOutcome(ctx context.Context, task *druidv1alpha1.EtcdOpsTask, mutate func(*druidv1alpha1.EtcdOpsTaskStatus)) error {
	return retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		err := r.update(ctx, task, mutate)
		if !apierrors.IsConflict(err) {
			return err
		}
		current := &druidv1alpha1.EtcdOpsTask{}
		if gerr := r.Reader.Get(ctx, client.ObjectKeyFromObject(task), current); gerr != nil {
			return gerr
		}
		if current.IsCompleted() {
			return fmt.Errorf("EtcdOpsTask %s finished meanwhile (state %s)", task.Name, stateOf(current))
		}
		*task = *current
		return err // a conflict: RetryOnConflict tries again on the task just read
	})
}

// maxMessage bounds what of an error (a sidecar's answer may be long) goes into the status and events:
// an event's note is limited to 1 KiB.
const maxMessage = 900

// boundedMessage cuts message to maxMessage bytes at a rune boundary, saying so.
func boundedMessage(message string) string {
	if len(message) <= maxMessage {
		return message
	}
	cut := maxMessage
	for cut > 0 && !utf8.RuneStart(message[cut]) {
		cut--
	}
	return message[:cut] + " … (cut)"
}

// update changes the task's status with mutate and writes it, failing on a conflict (the reconcile is then
// retried on the newer task instead of acting on a stale one).
func (r *Reconciler) update(ctx context.Context, task *druidv1alpha1.EtcdOpsTask, mutate func(*druidv1alpha1.EtcdOpsTaskStatus)) error {
	before := task.DeepCopy()
	mutate(&task.Status)
	if err := r.Client.Status().Patch(ctx, task, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("writing the status of EtcdOpsTask %s: %w", task.Name, err)
	}
	return nil
}

func (r *Reconciler) setState(s *druidv1alpha1.EtcdOpsTaskStatus, state druidv1alpha1.TaskState) {
	if s.State != nil && *s.State == state {
		return
	}
	now := metav1.NewTime(r.Clock.Now())
	if state == druidv1alpha1.TaskStateInProgress && s.StartedAt == nil {
		s.StartedAt = &now
	}
	s.State = &state
	s.LastTransitionTime = &now
}

func setOperation(s *druidv1alpha1.EtcdOpsTaskStatus, typ druidv1alpha1.LastOperationType, state druidv1alpha1.LastOperationState, description, runID string, now time.Time) {
	s.LastOperation = &druidv1alpha1.LastOperation{Type: typ, State: state, Description: description, RunID: runID, LastUpdateTime: metav1.NewTime(now)}
}

// addError appends to status.lastErrors, keeping the newest MaxOpsTaskLastErrors.
func addError(s *druidv1alpha1.EtcdOpsTaskStatus, code druidv1alpha1.ErrorCode, description string, now time.Time) {
	s.LastErrors = append(s.LastErrors, druidv1alpha1.LastError{Code: code, Description: description, ObservedAt: metav1.NewTime(now)})
	if n := len(s.LastErrors); n > druidv1alpha1.MaxOpsTaskLastErrors {
		s.LastErrors = s.LastErrors[n-druidv1alpha1.MaxOpsTaskLastErrors:]
	}
}

func lastErrorOf(task *druidv1alpha1.EtcdOpsTask) string {
	if n := len(task.Status.LastErrors); n > 0 {
		return task.Status.LastErrors[n-1].Description
	}
	return "no answer from the sidecar"
}

func stateOf(task *druidv1alpha1.EtcdOpsTask) druidv1alpha1.TaskState {
	return ptr.Deref(task.Status.State, "")
}

// describe names the snapshot a task asks for, e.g. "a final full snapshot".
func describe(c *druidv1alpha1.OnDemandSnapshotConfig) string {
	switch {
	case c.Type == druidv1alpha1.OnDemandSnapshotTypeDelta:
		return "a delta snapshot"
	case ptr.Deref(c.IsFinal, false):
		return "a final full snapshot"
	}
	return "a full snapshot"
}

func runID(ctx context.Context) string {
	return string(controller.ReconcileIDFromContext(ctx))
}

// event records an event on the task, related to its Etcd when there is one.
func (r *Reconciler) event(task *druidv1alpha1.EtcdOpsTask, etcd *druidv1alpha1.Etcd, eventType, reason, action, note string, args ...any) {
	var related runtime.Object
	if etcd != nil {
		related = etcd
	}
	r.Recorder.Eventf(task, related, eventType, reason, action, note, args...)
}
