package chaos

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/compaction"
)

// Job outcomes as the table shows them.
const (
	jobSucceeded = "succeeded"
	jobFailed    = "failed"
	// jobGone: the Job went without its outcome being seen, in the Job or in druid's condition.
	jobGone = "gone"
)

// CompactionJob is one snapshot compaction Job druid ran during the run.
type CompactionJob struct {
	UID               types.UID
	Created, Finished time.Time
	// Outcome is jobSucceeded, jobFailed or jobGone.
	Outcome string
	// Reason is why a Job failed (the Job's condition, or druid's LastSnapshotCompactionSucceeded).
	Reason string
	// DuringFault: the Job's life overlapped a fault or a credential rotation (it may fail then).
	DuringFault bool
}

func (j CompactionJob) String() string {
	s := fmt.Sprintf("Job %s created %s, %s after %s", shortUID(j.UID), j.Created.Format("15:04:05"), j.Outcome, j.Finished.Sub(j.Created).Round(time.Second))
	if j.DuringFault {
		s += " (during a fault)"
	}
	if j.Reason != "" {
		s += ": " + j.Reason
	}
	return s
}

func shortUID(uid types.UID) string { return string(uid)[:min(8, len(uid))] }

// compactionWatch follows etcd-main's compaction Job `etcd-main-compactor` for the whole run. Druid deletes
// a finished Job once it recorded the outcome in the Etcd condition LastSnapshotCompactionSucceeded, so
// the watch reads the outcome from the Job while it is there and from that condition once it is gone; a
// Job runs for seconds at least, so looking every second sees each one. Jobs cannot start while the
// apiserver is down, when the watch cannot look.
type compactionWatch struct {
	s       *Suite
	windows *disturbances
	cancel  context.CancelFunc
	done    chan struct{}

	mu       sync.Mutex
	running  *CompactionJob
	recorded map[types.UID]bool
	// finished are the Jobs not yet handed to a round; all are every finished Job of the run.
	finished, all []CompactionJob
}

func (s *Suite) startCompactionWatch(ctx context.Context) *compactionWatch {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	w := &compactionWatch{s: s, windows: &s.windows, cancel: cancel, done: make(chan struct{}), recorded: map[types.UID]bool{}}
	go func() {
		defer close(w.done)
		t := time.NewTicker(pollInterval)
		defer t.Stop()
		for {
			w.look(ctx)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return w
}

func (w *compactionWatch) stop() {
	w.cancel()
	<-w.done
}

// look reads the Job once and records what changed.
func (w *compactionWatch) look(ctx context.Context) {
	c := w.s.Env.Client
	name := druidv1alpha1.CompactionJobName((&druidv1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Name: etcd.Name(etcd.RoleMain)}}))
	job := &batchv1.Job{}
	err := c.Get(ctx, client.ObjectKey{Namespace: w.s.Env.Namespace, Name: name}, job)
	switch {
	case apierrors.IsNotFound(err):
		if w.current() != nil {
			w.finish(w.outcomeFromCondition(ctx))
		}
		return
	case err != nil:
		return // the apiserver may be the fault
	}
	w.mu.Lock()
	if w.recorded[job.UID] {
		w.mu.Unlock()
		return
	}
	replaced := w.running != nil && w.running.UID != job.UID
	w.mu.Unlock()
	if replaced {
		w.finish(w.outcomeFromCondition(ctx))
	}
	w.mu.Lock()
	if w.running == nil {
		w.running = &CompactionJob{UID: job.UID, Created: job.CreationTimestamp.Time}
	}
	w.mu.Unlock()
	for _, cond := range job.Status.Conditions {
		if cond.Status != corev1.ConditionTrue {
			continue
		}
		switch cond.Type {
		case batchv1.JobComplete:
			w.finish(jobSucceeded, "")
		case batchv1.JobFailed:
			w.finish(jobFailed, strings.TrimSpace(cond.Reason+": "+cond.Message))
		}
	}
}

func (w *compactionWatch) current() *CompactionJob {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.running
}

// outcomeFromCondition is the outcome druid recorded for the running Job after it went: its condition
// LastSnapshotCompactionSucceeded updated at or after the Job's creation.
func (w *compactionWatch) outcomeFromCondition(ctx context.Context) (string, string) {
	job := w.current()
	obj := &druidv1alpha1.Etcd{}
	if err := w.s.Env.Client.Get(ctx, client.ObjectKey{Namespace: w.s.Env.Namespace, Name: etcd.Name(etcd.RoleMain)}, obj); err != nil {
		return jobGone, "reading the Etcd: " + err.Error()
	}
	cond := druidv1alpha1.FindCondition(obj.Status.Conditions, compaction.ConditionTypeLastSnapshotCompactionSucceeded)
	if cond == nil || cond.LastUpdateTime.Time.Before(job.Created.Truncate(time.Second)) {
		return jobGone, "deleted without druid recording an outcome"
	}
	if cond.Status == druidv1alpha1.ConditionTrue {
		return jobSucceeded, ""
	}
	return jobFailed, cond.Reason + ": " + cond.Message
}

// finish records the running Job's outcome.
func (w *compactionWatch) finish(outcome, reason string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.running == nil {
		return
	}
	j := *w.running
	j.Finished, j.Outcome, j.Reason = time.Now(), outcome, reason
	j.DuringFault = w.windows.overlaps(j.Created, j.Finished)
	w.running = nil
	w.recorded[j.UID] = true
	w.finished = append(w.finished, j)
	w.all = append(w.all, j)
}

// collect hands the Jobs finished since the last call to a round; the error names a Job that failed
// (or went without an outcome) while no fault was active around it.
func (w *compactionWatch) collect() ([]CompactionJob, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	jobs := w.finished
	w.finished = nil
	var bad []string
	for _, j := range jobs {
		if j.Outcome != jobSucceeded && !j.DuringFault {
			bad = append(bad, j.String())
		}
	}
	if len(bad) > 0 {
		return jobs, fmt.Errorf("compaction without a fault around it: %s", strings.Join(bad, "; "))
	}
	return jobs, nil
}

// startedSince reports whether a compaction Job ran at or after t (it may have written a full snapshot).
func (w *compactionWatch) startedSince(t time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.running != nil {
		return true
	}
	for _, j := range w.all {
		if !j.Finished.Before(t) {
			return true
		}
	}
	return false
}

// waitIdle waits until no compaction Job runs: a step that compares the store's full snapshots before and
// after (the attacks) starts from a quiet store.
func (w *compactionWatch) waitIdle(ctx context.Context) error {
	return poll(ctx, "no compaction Job running", waitTimeout, func(context.Context) (string, error) {
		if j := w.current(); j != nil {
			return fmt.Sprintf("compaction Job %s running since %s", shortUID(j.UID), j.Created.Format("15:04:05")), nil
		}
		return "", nil
	})
}

// compactionSummary is a round's Jobs for the table: "1 ok", "1 failed", "—".
func compactionSummary(jobs []CompactionJob) string {
	outcomes := make([]string, 0, len(jobs))
	for _, j := range jobs {
		k := j.Outcome
		if k == jobSucceeded {
			k = "ok"
		}
		outcomes = append(outcomes, k)
	}
	return countedSummary(outcomes)
}

// setCompactionThreshold writes etcd-main's compaction events threshold, with Gardener's reconcile
// annotation: druid runs with spec auto-reconcile off, as in Gardener, and a spec change without it would
// leave the Etcd's observed generation behind.
func (s *Suite) setCompactionThreshold(ctx context.Context, threshold int64) error {
	obj := &druidv1alpha1.Etcd{}
	if err := s.Env.Client.Get(ctx, client.ObjectKey{Namespace: s.Env.Namespace, Name: etcd.Name(etcd.RoleMain)}, obj); err != nil {
		return err
	}
	patch := client.MergeFrom(obj.DeepCopy())
	if obj.Spec.Backup.SnapshotCompaction == nil {
		obj.Spec.Backup.SnapshotCompaction = &druidv1alpha1.SnapshotCompactionSpec{}
	}
	obj.Spec.Backup.SnapshotCompaction.EventsThreshold = &threshold
	metav1.SetMetaDataAnnotation(&obj.ObjectMeta, druidv1alpha1.GardenerOperationAnnotation, "reconcile")
	if err := s.Env.Client.Patch(ctx, obj, patch); err != nil {
		return fmt.Errorf("setting spec.backup.snapshotCompaction.eventsThreshold of etcd-main: %w", err)
	}
	return nil
}
