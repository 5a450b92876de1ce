package etcd

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/statefulset"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/flow"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/fullsnapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/health"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
)

// Events and the error code of the full snapshot before an update that stops the members.
const (
	// EventReasonFullSnapshotBeforeHibernation is a Normal event: the snapshot before scaling to 0 was taken.
	EventReasonFullSnapshotBeforeHibernation = "FullSnapshotBeforeHibernation"
	// EventReasonFullSnapshotBeforeImageChange is a Normal event: the snapshot before rolling new images was
	// taken.
	EventReasonFullSnapshotBeforeImageChange = "FullSnapshotBeforeImageChange"
	// EventReasonFullSnapshotBeforeUpdateFailed is a Warning event: the snapshot failed, so the update waits.
	EventReasonFullSnapshotBeforeUpdateFailed = "FullSnapshotBeforeUpdateFailed"
	// EventReasonNoFullSnapshotBeforeUpdate says that the update goes ahead without a snapshot, and why: a
	// Normal event without a backup store (nothing to snapshot to), a Warning one when the snapshot was
	// wanted but cannot be taken (no client certificate, no quorum).
	EventReasonNoFullSnapshotBeforeUpdate = "NoFullSnapshotBeforeUpdate"
	// ErrorCodeFullSnapshotBeforeUpdate is recorded in status.lastErrors while the snapshot fails.
	ErrorCodeFullSnapshotBeforeUpdate druidv1alpha1.ErrorCode = "ERR_FULL_SNAPSHOT_BEFORE_UPDATE"
	// EventReasonFullSnapshotBeforeUpdateRefused is a Warning event: the sidecar refused druid as a caller
	// (401/403), so the update waits for the refusal grace (config.EtcdController.FullSnapshotRefusalGrace).
	EventReasonFullSnapshotBeforeUpdateRefused = "FullSnapshotBeforeUpdateRefused"
	// ErrorCodeFullSnapshotRefused is recorded in status.lastErrors while the sidecar refuses.
	ErrorCodeFullSnapshotRefused druidv1alpha1.ErrorCode = "ERR_FULL_SNAPSHOT_REFUSED"
)

// minRefusals is how many refused requests in a row, besides the refusal grace, an update waits for before
// it goes ahead: one refusal may come from a certificate being rotated.
const minRefusals = 3

// recordedSnapshotFreshness is how long a snapshot recorded for an update still counts for it: an update
// held longer by something else (a component that does not sync) would otherwise go ahead on an old one.
const recordedSnapshotFreshness = 5 * time.Minute

// stoppingUpdate is a StatefulSet change that stops every member of a running cluster: hibernation (scaling
// to 0) or a new etcd or backup-restore image (a rolling restart onto other binaries). Before it, the store
// should hold everything the cluster has: the members may not come back with their data (a new etcd that
// cannot read it, volumes lost while hibernated), and the last delta is up to a delta period old.
type stoppingUpdate struct {
	hibernation bool
	// what says what changes, for events, logs and lastOperation.
	what string
	// key identifies this update (fullsnapshot.Record.For): the Etcd generation the run reconciles, the
	// StatefulSet's generation and the target. A requeue or a restarted druid computes the same key for
	// the same update; a later update computes another, even to the same target (the StatefulSet's
	// generation moved on), so it takes a snapshot of its own.
	key string
}

// pendingStoppingUpdate tells whether writing the rendered template and replicas into sts is a stopping
// update. A StatefulSet at 0 replicas runs nothing to snapshot (new images while hibernated, wake-up).
func pendingStoppingUpdate(sts *appsv1.StatefulSet, rendered *statefulset.Rendered, replicas int32, etcdGeneration int64) (stoppingUpdate, bool) {
	current := ptr.Deref(sts.Spec.Replicas, 1)
	if current == 0 || rendered == nil {
		return stoppingUpdate{}, false
	}
	u := stoppingUpdate{
		hibernation: replicas == 0,
		key: fmt.Sprintf("etcd-generation=%d,statefulset-generation=%d,replicas=%d,pod-template=%s",
			etcdGeneration, sts.Generation, replicas, rendered.Checksum),
	}
	changes := imageChanges(statefulset.ContainerImages(sts.Spec.Template), rendered.ContainerImages())
	switch {
	case u.hibernation:
		u.what = fmt.Sprintf("scaling from %d to 0 replicas (hibernation)", current)
	case len(changes) > 0:
		u.what = "changing " + strings.Join(changes, " and ")
	default:
		return stoppingUpdate{}, false
	}
	return u, true
}

// imageChanges lists the etcd and backup-restore containers whose image changes, as "the <name> image from
// <old> to <new>". A container that is new or goes away is not an image change of a running member.
func imageChanges(current, target map[string]string) []string {
	var changes []string
	for _, name := range []string{etcdpod.ContainerEtcd, etcdpod.ContainerBackupRestore} {
		old, updated := current[name], target[name]
		if old != "" && updated != "" && old != updated {
			changes = append(changes, fmt.Sprintf("the %s image from %s to %s", name, old, updated))
		}
	}
	sort.Strings(changes)
	return changes
}

func (u stoppingUpdate) eventReason() string {
	if u.hibernation {
		return EventReasonFullSnapshotBeforeHibernation
	}
	return EventReasonFullSnapshotBeforeImageChange
}

// snapshotBeforeUpdate asks the backup leader for a full snapshot before a stopping update is synced, and
// lets the update through only once it succeeded (or cannot be had, see below). It records the snapshot
// on the StatefulSet (fullsnapshot.Record) before the update, so that the snapshot is taken once per
// update, also across requeues and druid restarts, and so that status.lastFullSnapshot shows its revision
// at once; a record older than recordedSnapshotFreshness (the update was held that long by something
// else) is taken again. A failed snapshot holds the update: Warning event, lastOperation Error and
// lastErrors, and a retry with back-off (snapshotRetries).
//
// The update goes ahead without a snapshot when none can be taken, because an update that waits for ever
// on something druid cannot change is worse than one on the backup the cluster already has, and the
// members' volumes stay (hibernation keeps the PVCs; wake-up starts from them), with every write since the
// last delta:
//   - no backup store: there is nowhere to put it (Normal event);
//   - no client certificate (spec.backup.tls.clientTLSSecretRef): the sidecar answers /snapshot/full only
//     to callers with a certificate of its CA, so druid can never ask; as the compaction controller, which
//     falls back to a Job then, the update is not held for a configuration druid cannot change (Warning);
//   - the sidecar refused druid as a caller (401/403) for FullSnapshotRefusalGrace and at least
//     minRefusals requests in a row (refusedSnapshot): asking again does not change a certificate it does
//     not accept or an image that authenticates otherwise, and that sidecar, being up, keeps uploading
//     deltas (Warning, after Warnings and lastErrors ERR_FULL_SNAPSHOT_REFUSED while it waits);
//   - the snapshot failed and the members the StatefulSet runs have no quorum (judged as the Ready
//     condition): no member can take one, and hibernating or repairing a broken cluster must stay possible
//     (Warning). The snapshot is always tried first: the leases the quorum is judged from may be stale
//     while etcd serves.
func (s *specRun) snapshotBeforeUpdate(ctx context.Context) flow.Result {
	cached, err := s.existingStatefulSet(ctx)
	if err != nil || cached == nil {
		return flowResultOf(err)
	}
	key := client.ObjectKeyFromObject(s.etcd)
	if _, pending := pendingStoppingUpdate(cached, s.rendered, s.target.Spec.Replicas, s.generation); !pending {
		s.r.snapshotRetries.forget(key)
		return flow.Continue()
	}
	// Decide on the stored StatefulSet: the cache may not show the record this druid wrote a moment ago.
	sts := &appsv1.StatefulSet{}
	if err := s.r.reader.Get(ctx, client.ObjectKeyFromObject(cached), sts); err != nil {
		if apierrors.IsNotFound(err) {
			return flow.Continue()
		}
		return flow.Fail(fmt.Errorf("reading statefulset: %w", err))
	}
	update, pending := pendingStoppingUpdate(sts, s.rendered, s.target.Spec.Replicas, s.generation)
	if !pending {
		s.r.snapshotRetries.forget(key)
		return flow.Continue()
	}
	logger := log.FromContext(ctx).WithValues("update", update.what)
	if record, ok := fullsnapshot.RecordOf(sts); ok && record.For == update.key && s.r.clock.Since(record.TakenAt.Time) < recordedSnapshotFreshness {
		logger.V(1).Info("Full snapshot for this update already taken", "revision", record.Revision)
		return flow.Continue()
	}
	if s.target.Spec.Backup.Store == nil {
		s.proceedWithoutSnapshot(ctx, update, "no backup store is configured", corev1.EventTypeNormal)
		return flow.Continue()
	}

	if wait := s.r.snapshotRetries.wait(key, update.key, s.r.clock.Now()); wait > 0 {
		logger.V(1).Info("Full snapshot before the update failed before, waiting to retry", "retryIn", wait)
		return flow.RequeueAfter(wait, "waiting to retry the full snapshot before "+update.what)
	}
	logger.Info("Requesting a full snapshot before the update")
	taken, err := s.r.snapshots.FullSnapshot(ctx, s.target)
	if errors.Is(err, fullsnapshot.ErrNoClientCertificate) {
		s.proceedWithoutSnapshot(ctx, update, err.Error(), corev1.EventTypeWarning)
		return flow.Continue()
	}
	if err != nil {
		quorate, qerr := s.quorate(ctx, sts)
		if qerr == nil && !quorate {
			s.proceedWithoutSnapshot(ctx, update, fmt.Sprintf("the full snapshot failed (%v) and the cluster has no quorum, so no member can take one; "+
				"the store holds what the last delta snapshot uploaded, the volumes (kept) every write since", err), corev1.EventTypeWarning)
			return flow.Continue()
		}
		if fullsnapshot.IsRefusal(err) {
			return s.refusedSnapshot(ctx, key, update, err)
		}
		return s.holdForSnapshot(ctx, update, err, s.r.snapshotRetries.failed(key, update.key, s.r.clock.Now()))
	}
	s.r.snapshotRetries.forget(key)
	record := fullsnapshot.NewRecord(update.key, taken, s.r.clock.Now())
	markers := map[string]string{fullsnapshot.BeforeUpdateAnnotation: record.Encode()}
	if err := s.r.statefulSets().ScaleWithMarkers(ctx, sts, ptr.Deref(sts.Spec.Replicas, 1), markers); err != nil {
		return flow.Fail(fmt.Errorf("recording the full snapshot before %s: %w", update.what, err))
	}
	revision := "an unreported revision"
	if record.Revision > 0 {
		revision = fmt.Sprintf("revision %d", record.Revision)
	}
	logger.Info("Full snapshot taken before the update", "revision", record.Revision, "name", record.Name)
	s.r.recorder.Eventf(s.etcd, nil, corev1.EventTypeNormal, update.eventReason(), actionReconcile,
		"full snapshot at %s taken before %s", revision, update.what)
	return flow.Continue()
}

// quorate tells whether the members the StatefulSet runs have quorum, judged as the Ready condition
// judges it but for the StatefulSet's replicas: the status's Ready follows spec.replicas, and says
// NotChecked ("hibernated") as soon as the spec asks for 0, while the members still run.
func (s *specRun) quorate(ctx context.Context, sts *appsv1.StatefulSet) (bool, error) {
	running := s.etcd.DeepCopy()
	running.Spec.Replicas = ptr.Deref(sts.Spec.Replicas, 1)
	observed, err := s.r.Observe(ctx, running, sts)
	if err != nil {
		return false, err
	}
	members := health.Members(observed.Etcd, observed.MemberLeases, observed.Pods, s.r.thresholds(), s.r.clock.Now())
	ready := health.ReadyCondition(members, health.ClusterSizeForQuorum(observed, len(members)))
	return ready.Status == druidv1alpha1.ConditionTrue, nil
}

func (s *specRun) proceedWithoutSnapshot(ctx context.Context, update stoppingUpdate, why, eventType string) {
	log.FromContext(ctx).Info("Update goes ahead without a full snapshot", "update", update.what, "reason", why)
	s.r.recorder.Eventf(s.etcd, nil, eventType, EventReasonNoFullSnapshotBeforeUpdate, actionReconcile,
		"%s without a full snapshot first: %s", update.what, why)
}

// holdForSnapshot records the failed snapshot and requeues the run after retryIn; nothing is synced
// meanwhile (the data first: the update waits, the cluster keeps running as it is).
func (s *specRun) holdForSnapshot(ctx context.Context, update stoppingUpdate, cause error, retryIn time.Duration) flow.Result {
	message := fmt.Sprintf("%s held back: the full snapshot before it failed: %v; retrying in %s", update.what, cause, retryIn)
	log.FromContext(ctx).Info("Full snapshot before the update failed, the update waits", "update", update.what, "error", cause.Error(), "retryIn", retryIn)
	s.r.recorder.Eventf(s.etcd, nil, corev1.EventTypeWarning, EventReasonFullSnapshotBeforeUpdateFailed, actionReconcile, "%s", message)
	lastError := druidv1alpha1.LastError{Code: ErrorCodeFullSnapshotBeforeUpdate, Description: message, ObservedAt: metav1.NewTime(s.r.clock.Now())}
	if err := s.record(ctx, druidv1alpha1.LastOperationStateError, message, lastError); err != nil {
		return flow.Fail(err)
	}
	return flow.RequeueAfter(retryIn, message)
}

// refusedSnapshot handles the sidecar's refusal of druid's request (401/403). The update waits, saying why
// and what to check (Warning event FullSnapshotBeforeUpdateRefused, lastErrors ERR_FULL_SNAPSHOT_REFUSED),
// until the sidecar refused for FullSnapshotRefusalGrace and at least minRefusals times in a row; then it
// goes ahead without the snapshot. The data stays safe: hibernation and new images keep the volumes, which
// hold every write, and the refusing sidecar is up and uploads deltas, so the store is at most a delta
// period behind, as it is when no client certificate is configured. The count belongs to this update
// (snapshotRetries): an update that was withdrawn and a later one each wait their own grace. It lives in
// memory: a restarted druid waits the grace again (longer, never shorter).
func (s *specRun) refusedSnapshot(ctx context.Context, key client.ObjectKey, update stoppingUpdate, cause error) flow.Result {
	now := s.r.clock.Now()
	grace := s.r.config.FullSnapshotRefusalGrace
	since, refusals, retryIn := s.r.snapshotRetries.refused(key, update.key, now)
	if refusals >= minRefusals && now.Sub(since) >= grace {
		s.r.snapshotRetries.forget(key)
		s.proceedWithoutSnapshot(ctx, update, fmt.Sprintf("the sidecar refused druid's request %d times in a row since %s (%v); "+
			"the volumes (kept) hold every write, the store what the last delta snapshot uploaded", refusals, since.UTC().Format(time.RFC3339), cause), corev1.EventTypeWarning)
		return flow.Continue()
	}
	message := fmt.Sprintf("the sidecar refused druid's request for a full snapshot before %s: %v. "+
		"Check that spec.backup.tls.clientTLSSecretRef holds a certificate of the CA the sidecar trusts (spec.backup.tls.tlsCASecretRef) "+
		"and that the backup-restore image accepts it; the update goes ahead without the snapshot once refused for %s and %d times in a row (refused %d times since %s); retrying in %s",
		update.what, cause, grace, minRefusals, refusals, since.UTC().Format(time.RFC3339), retryIn)
	log.FromContext(ctx).Info("The sidecar refused the full snapshot before the update, the update waits", "update", update.what, "error", cause.Error(), "refusals", refusals, "retryIn", retryIn)
	s.r.recorder.Eventf(s.etcd, nil, corev1.EventTypeWarning, EventReasonFullSnapshotBeforeUpdateRefused, actionReconcile, "%s", message)
	lastError := druidv1alpha1.LastError{Code: ErrorCodeFullSnapshotRefused, Description: message, ObservedAt: metav1.NewTime(now)}
	if err := s.record(ctx, druidv1alpha1.LastOperationStateError, message, lastError); err != nil {
		return flow.Fail(err)
	}
	return flow.RequeueAfter(retryIn, message)
}
