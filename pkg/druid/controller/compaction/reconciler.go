// Package compaction is druid's snapshot compaction controller. The sidecar writes the revision of its last
// full and delta snapshot into the snapshot leases `<n>-full-snap` and `<n>-delta-snap`; their difference is
// the number of events a restore would replay. When it reaches spec.backup.snapshotCompaction.eventsThreshold
// the controller runs the Job `<n>-compactor` (`etcdbrctl compact`), which uploads a compacted full snapshot,
// records the outcome as the Etcd condition LastSnapshotCompactionSucceeded, and deletes the finished Job so
// that the next threshold crossing can start a new one. Failed compactions are retried with back-off.
// At spec.backup.snapshotCompaction.triggerFullSnapshotThreshold, or after a Job exceeded its deadline, it
// asks the backup leader's sidecar for a full snapshot instead of running a Job (fullsnapshot.Requester).
package compaction

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/fullsnapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/health"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/storeaccess"
)

// ConditionTypeLastSnapshotCompactionSucceeded tells whether the last compaction Job of the Etcd succeeded;
// absent until the first one finished. The Etcd controller's status flow must keep it (it only replaces the
// condition types it computes).
const ConditionTypeLastSnapshotCompactionSucceeded druidv1alpha1.ConditionType = "LastSnapshotCompactionSucceeded"

// Condition reasons and event reasons.
const (
	// ReasonCompactionSucceeded is the reason of a True condition after a Job succeeded (upstream
	// druid's; a False one carries conditionReason).
	ReasonCompactionSucceeded = "None"
	// EventReasonJobCreated is a Normal event when a compaction starts.
	EventReasonJobCreated = "CompactionJobCreated"
	// EventReasonJobFailed is a Warning event: backups keep growing until a compaction succeeds.
	EventReasonJobFailed = "CompactionJobFailed"
	// ReasonFullSnapshotTaken is the reason of a True condition and of a Normal event when a full snapshot
	// replaced a compaction (upstream druid's reason).
	ReasonFullSnapshotTaken = "FullSnapshotTakenSuccessfully"
	// ReasonFullSnapshotError is the reason of a False condition when requesting that full snapshot failed
	// (upstream druid's reason, FullSnapshotFailureReason in its API).
	ReasonFullSnapshotError = "ErrorTriggeringFullSnapshot"
	// EventReasonFullSnapshotTaken is a Normal event when a full snapshot replaced a compaction.
	EventReasonFullSnapshotTaken = ReasonFullSnapshotTaken
	// EventReasonFullSnapshotFailed is a Warning event when requesting that full snapshot failed.
	EventReasonFullSnapshotFailed = "FullSnapshotFailed"
	// ReasonLocalStoreRefused is the reason of a False condition when druid refuses to mount the Etcd's
	// Local store (a container or host path outside the allowed directories): no Job runs until the
	// store or druid's configuration is fixed; the message names the path.
	ReasonLocalStoreRefused = "LocalStoreRefused"
	// EventReasonLocalStoreRefused is the Warning event of the same refusal.
	EventReasonLocalStoreRefused = ReasonLocalStoreRefused
)

// Reconciler looks at one Etcd per call.
type Reconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	Config   config.CompactionController
	Clock    clock.PassiveClock
	// FullSnapshotter is asked for a full snapshot instead of a compaction Job beyond
	// triggerFullSnapshotThreshold (fullsnapshot.HTTP in druid).
	FullSnapshotter fullsnapshot.Requester

	mu sync.Mutex
	// failures counts consecutive failed compactions per Etcd for the back-off. It is memory only: after a
	// restart the back-off starts again from its base, anchored at the failure time in the condition.
	failures map[types.NamespacedName]int
}

// Reconcile implements reconcile.Reconciler for Etcds.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	logger := log.FromContext(ctx).WithValues("etcd", req.NamespacedName)
	ctx = log.IntoContext(ctx, logger)
	etcd := &druidv1alpha1.Etcd{}
	if err := r.Client.Get(ctx, req.NamespacedName, etcd); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !etcd.DeletionTimestamp.IsZero() {
		// The Job goes with the Etcd (owner reference); nothing to start or record any more.
		r.forget(req.NamespacedName)
		return ctrl.Result{}, nil
	}

	// The gauge follows the leases whether or not a Job runs.
	events, haveRevisions := int64(0), false
	if etcd.Spec.Backup.Store != nil {
		var err error
		if events, haveRevisions, err = r.deltaEvents(ctx, etcd); err != nil {
			return ctrl.Result{}, err
		}
		if haveRevisions {
			deltaEventsGauge.WithLabelValues(etcd.Namespace, etcd.Name).Set(float64(events))
		}
	}

	job := &batchv1.Job{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: etcd.Namespace, Name: druidv1alpha1.CompactionJobName(etcd)}, job)
	switch {
	case err == nil:
		return r.handleJob(ctx, etcd, job)
	case !apierrors.IsNotFound(err):
		return ctrl.Result{}, err
	}

	if etcd.Spec.Backup.Store == nil {
		forgetMetrics(etcd.Namespace, etcd.Name)
		return ctrl.Result{}, nil
	}
	if !haveRevisions {
		return ctrl.Result{}, nil
	}
	threshold, fullThreshold := r.threshold(etcd), r.fullSnapshotThreshold(etcd)
	if events < threshold && events < fullThreshold {
		logger.V(1).Info("Delta events below the compaction threshold", "deltaEvents", events, "threshold", threshold)
		return ctrl.Result{}, nil
	}
	if wait := r.backoffRemaining(etcd); wait > 0 {
		logger.Info("Compaction due but backing off after a failed one", "deltaEvents", events, "retryIn", wait)
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	if why := fullSnapshotReason(etcd, events, fullThreshold); why != "" {
		result, done, err := r.requestFullSnapshot(ctx, etcd, events, why)
		if done {
			return result, err
		}
		if events < threshold {
			return ctrl.Result{}, nil
		}
	}
	return ctrl.Result{}, r.createJob(ctx, etcd, events, threshold)
}

// threshold is the Etcd's events threshold or the configured default.
func (r *Reconciler) threshold(etcd *druidv1alpha1.Etcd) int64 {
	if c := etcd.Spec.Backup.SnapshotCompaction; c != nil && c.EventsThreshold != nil && *c.EventsThreshold > 0 {
		return *c.EventsThreshold
	}
	return r.Config.EventsThreshold
}

// fullSnapshotThreshold is the Etcd's triggerFullSnapshotThreshold or the configured default.
func (r *Reconciler) fullSnapshotThreshold(etcd *druidv1alpha1.Etcd) int64 {
	if c := etcd.Spec.Backup.SnapshotCompaction; c != nil && c.TriggerFullSnapshotThreshold != nil && *c.TriggerFullSnapshotThreshold > 0 {
		return *c.TriggerFullSnapshotThreshold
	}
	return r.Config.TriggerFullSnapshotThreshold
}

// fullSnapshotReason says why a full snapshot replaces a compaction Job, as in upstream druid: the
// delta events reached triggerFullSnapshotThreshold, where a Job replaying all of them is unlikely to
// finish, the last Job ran out of its deadline, or the last such request failed (so that a failed request
// after a deadline is not followed by another Job that runs out of it). Empty when a Job is the way, also
// always while the Etcd is hibernated (no sidecar runs to take the snapshot; the Job needs only the store).
func fullSnapshotReason(etcd *druidv1alpha1.Etcd, events, fullThreshold int64) string {
	if etcd.Spec.Replicas == 0 {
		return ""
	}
	if events >= fullThreshold {
		return fmt.Sprintf("%d delta events since the last full snapshot reached triggerFullSnapshotThreshold %d", events, fullThreshold)
	}
	cond := druidv1alpha1.FindCondition(etcd.Status.Conditions, ConditionTypeLastSnapshotCompactionSucceeded)
	if cond == nil || cond.Status != druidv1alpha1.ConditionFalse {
		return ""
	}
	switch cond.Reason {
	case batchv1.JobReasonDeadlineExceeded:
		return fmt.Sprintf("the last compaction Job exceeded its deadline with %d delta events", events)
	case ReasonFullSnapshotError:
		return fmt.Sprintf("requesting the last full snapshot failed with %d delta events", events)
	}
	return ""
}

// requestFullSnapshot asks the backup leader for a full snapshot and records the outcome in the condition
// LastSnapshotCompactionSucceeded (a full snapshot leaves no delta events to compact). done is false when
// druid cannot make the request (no client certificate): the caller then starts a compaction Job instead.
func (r *Reconciler) requestFullSnapshot(ctx context.Context, etcd *druidv1alpha1.Etcd, events int64, why string) (ctrl.Result, bool, error) {
	logger := log.FromContext(ctx)
	defaulted := druidv1alpha1.Defaulted(etcd)
	logger.Info("Requesting a full snapshot instead of a compaction", "deltaEvents", events, "reason", why)
	_, err := r.FullSnapshotter.FullSnapshot(ctx, defaulted)
	if errors.Is(err, fullsnapshot.ErrNoClientCertificate) {
		logger.Info("Cannot request a full snapshot, starting a compaction Job instead", "reason", err.Error())
		return ctrl.Result{}, false, nil
	}
	key := client.ObjectKeyFromObject(etcd)
	if err != nil {
		if cerr := r.setCondition(ctx, etcd, druidv1alpha1.ConditionFalse, ReasonFullSnapshotError,
			fmt.Sprintf("%s; requesting a full snapshot failed: %v", why, err)); cerr != nil {
			return ctrl.Result{}, true, cerr
		}
		failures := r.setFailures(key, -1)
		fullSnapshotTriggered.WithLabelValues("false", etcd.Namespace, etcd.Name).Inc()
		wait := r.Config.Backoff(failures)
		logger.Info("Full snapshot request failed", "error", err.Error(), "consecutiveFailures", failures, "retryIn", wait)
		r.Recorder.Eventf(etcd, nil, corev1.EventTypeWarning, EventReasonFullSnapshotFailed, "FullSnapshot",
			"%s; requesting a full snapshot failed: %v; retrying after %s at the earliest", why, err, wait)
		return ctrl.Result{RequeueAfter: wait}, true, nil
	}
	if err := r.setCondition(ctx, etcd, druidv1alpha1.ConditionTrue, ReasonFullSnapshotTaken, why+"; a full snapshot was taken instead of a compaction"); err != nil {
		return ctrl.Result{}, true, err
	}
	r.setFailures(key, 0)
	fullSnapshotTriggered.WithLabelValues("true", etcd.Namespace, etcd.Name).Inc()
	logger.Info("Full snapshot taken instead of a compaction", "deltaEvents", events)
	r.Recorder.Eventf(etcd, nil, corev1.EventTypeNormal, EventReasonFullSnapshotTaken, "FullSnapshot", "%s; a full snapshot was taken instead of a compaction", why)
	return ctrl.Result{}, true, nil
}

// deltaEvents reads both snapshot leases; ok is false until both carry a revision (no full snapshot yet
// means there is nothing to compact onto).
func (r *Reconciler) deltaEvents(ctx context.Context, etcd *druidv1alpha1.Etcd) (int64, bool, error) {
	var revisions [2]int64
	for i, name := range []string{druidv1alpha1.FullSnapshotLeaseName(etcd), druidv1alpha1.DeltaSnapshotLeaseName(etcd)} {
		lease := &coordinationv1.Lease{}
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: etcd.Namespace, Name: name}, lease); err != nil {
			if apierrors.IsNotFound(err) {
				log.FromContext(ctx).V(1).Info("Snapshot lease not there yet", "lease", name)
				return 0, false, nil
			}
			return 0, false, err
		}
		rev, ok := leaseRevision(lease)
		if !ok {
			log.FromContext(ctx).V(1).Info("Snapshot lease carries no revision yet", "lease", name)
			return 0, false, nil
		}
		revisions[i] = rev
	}
	return deltaEvents(revisions[0], revisions[1]), true, nil
}

// createJob starts a compaction. An existing Job (a cache that lags behind our own create) is fine.
func (r *Reconciler) createJob(ctx context.Context, etcd *druidv1alpha1.Etcd, events, threshold int64) error {
	defaulted := druidv1alpha1.Defaulted(etcd)
	local, err := storeaccess.ResolveLocalStore(ctx, r.Client, defaulted.Spec.Backup.Store, storeaccess.EtcdContainerField, etcd.Namespace, volumeLocalStore, r.Config.LocalBackup)
	if storeaccess.IsLocalStoreRefused(err) {
		return r.recordLocalStoreRefused(ctx, etcd, err)
	}
	if err != nil {
		return err
	}
	image, caps := jobImageAndCaps(etcd, r.Config)
	job := newJob(defaulted, jobInput{image: image, caps: caps, activeDeadline: r.Config.ActiveDeadline, local: local})
	if err := r.Client.Create(ctx, job); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return fmt.Errorf("creating compaction job %s: %w", job.Name, err)
	}
	jobsCurrent.WithLabelValues(etcd.Namespace, etcd.Name).Set(1)
	log.FromContext(ctx).Info("Created compaction job", "job", job.Name, "deltaEvents", events, "threshold", threshold)
	r.Recorder.Eventf(etcd, job, corev1.EventTypeNormal, EventReasonJobCreated, "Compact",
		"%d delta events since the last full snapshot reached the threshold %d; started Job %s", events, threshold, job.Name)
	return nil
}

// recordLocalStoreRefused reports a Local store druid will not mount on the Etcd: the condition False (which
// also holds the next attempt back by the failure back-off, anchored at its update time) and a Warning
// event, both naming the path. Retrying sooner cannot help: only a changed Etcd, secret or configuration can.
func (r *Reconciler) recordLocalStoreRefused(ctx context.Context, etcd *druidv1alpha1.Etcd, refused error) error {
	r.setFailures(client.ObjectKeyFromObject(etcd), -1)
	message := "no compaction Job: " + refused.Error()
	log.FromContext(ctx).Info("Local store refused, no compaction Job", "reason", refused.Error())
	r.Recorder.Eventf(etcd, nil, corev1.EventTypeWarning, EventReasonLocalStoreRefused, "Compact", "%s", message)
	return r.setCondition(ctx, etcd, druidv1alpha1.ConditionFalse, ReasonLocalStoreRefused, message)
}

// handleJob waits for a running Job and records a finished one. Only one Job exists per Etcd at a time, so a
// running Job is also what keeps a second compaction from starting.
func (r *Reconciler) handleJob(ctx context.Context, etcd *druidv1alpha1.Etcd, job *batchv1.Job) (ctrl.Result, error) {
	logger := log.FromContext(ctx).WithValues("job", job.Name)
	if !job.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil // its delete event brings the Etcd back
	}
	outcome, cond := outcomeOf(job)
	key := client.ObjectKeyFromObject(etcd)
	switch outcome {
	case jobSucceeded:
		if err := r.setCondition(ctx, etcd, druidv1alpha1.ConditionTrue, ReasonCompactionSucceeded,
			fmt.Sprintf("compaction Job %s succeeded", job.Name)); err != nil {
			return ctrl.Result{}, err
		}
		if deleted, err := r.deleteJob(ctx, job); err != nil || !deleted {
			return ctrl.Result{}, err
		}
		r.setFailures(key, 0)
		jobFinished(etcd, job, cond, failureReasonNone)
		logger.Info("Compaction job succeeded")
	case jobFailed:
		// Read before the Job goes: its pods go with it.
		pods, err := r.jobPods(ctx, job)
		if err != nil {
			return ctrl.Result{}, err
		}
		reason, message := conditionReason(cond, pods), "no reason given"
		if cond.Message != "" {
			message = cond.Message
		}
		if err := r.setCondition(ctx, etcd, druidv1alpha1.ConditionFalse, reason,
			fmt.Sprintf("compaction Job %s failed (%s): %s", job.Name, cond.Reason, message)); err != nil {
			return ctrl.Result{}, err
		}
		if deleted, err := r.deleteJob(ctx, job); err != nil || !deleted {
			return ctrl.Result{}, err
		}
		failures := r.setFailures(key, -1)
		jobFinished(etcd, job, cond, failureReason(cond, pods))
		wait := r.Config.Backoff(failures)
		logger.Info("Compaction job failed", "reason", reason, "message", message, "consecutiveFailures", failures, "retryIn", wait)
		r.Recorder.Eventf(etcd, job, corev1.EventTypeWarning, EventReasonJobFailed, "Compact",
			"compaction Job %s failed (%s): %s; retrying after %s at the earliest", job.Name, reason, message, wait)
		return ctrl.Result{RequeueAfter: wait}, nil
	default:
		// Also after a druid restart, which found the Job running.
		jobsCurrent.WithLabelValues(etcd.Namespace, etcd.Name).Set(1)
		logger.V(1).Info("Compaction job still running")
	}
	return ctrl.Result{}, nil
}

// deleteJob deletes a finished Job with its pods (background propagation). deleted is false when the Job
// was already gone, so that a finished Job is counted once.
func (r *Reconciler) deleteJob(ctx context.Context, job *batchv1.Job) (bool, error) {
	err := r.Client.Delete(ctx, job, client.PropagationPolicy("Background"), client.Preconditions{UID: &job.UID})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("deleting compaction job %s: %w", job.Name, err)
	}
	return true, nil
}

// setCondition writes LastSnapshotCompactionSucceeded with an optimistic lock: the conditions list is
// replaced as a whole by the merge patch, and the Etcd controller writes the same list.
func (r *Reconciler) setCondition(ctx context.Context, etcd *druidv1alpha1.Etcd, status druidv1alpha1.ConditionStatus, reason, message string) error {
	before := etcd.DeepCopy()
	etcd.Status.Conditions = health.SetCondition(etcd.Status.Conditions, druidv1alpha1.Condition{
		Type: ConditionTypeLastSnapshotCompactionSucceeded, Status: status, Reason: reason, Message: message,
	}, r.Clock.Now())
	if err := r.Client.Status().Patch(ctx, etcd, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("recording the compaction outcome: %w", err)
	}
	return nil
}

// backoffRemaining is how long to wait before the next Job after failed ones: the back-off for the
// consecutive failures, counted from the failure time recorded in the condition.
func (r *Reconciler) backoffRemaining(etcd *druidv1alpha1.Etcd) time.Duration {
	cond := druidv1alpha1.FindCondition(etcd.Status.Conditions, ConditionTypeLastSnapshotCompactionSucceeded)
	if cond == nil || cond.Status != druidv1alpha1.ConditionFalse {
		return 0
	}
	failures := max(r.failuresOf(client.ObjectKeyFromObject(etcd)), 1)
	return cond.LastUpdateTime.Add(r.Config.Backoff(failures)).Sub(r.Clock.Now())
}

// setFailures resets the count (n = 0) or increments it (n < 0) and returns the new count.
func (r *Reconciler) setFailures(key types.NamespacedName, n int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failures == nil {
		r.failures = map[types.NamespacedName]int{}
	}
	if n == 0 {
		delete(r.failures, key)
		return 0
	}
	r.failures[key]++
	return r.failures[key]
}

func (r *Reconciler) failuresOf(key types.NamespacedName) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failures[key]
}

// forget drops what the controller keeps about a gone Etcd.
func (r *Reconciler) forget(key types.NamespacedName) {
	r.setFailures(key, 0)
	forgetMetrics(key.Namespace, key.Name)
}
