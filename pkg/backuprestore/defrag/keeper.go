package defrag

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-logr/logr"
	"github.com/robfig/cron/v3"
)

// Defaults of KeepOptions.
const (
	// DefaultSchedule is the upstream sidecar's default --defragmentation-schedule.
	DefaultSchedule = "0 0 */3 * *"
	// DefaultCheckPeriod is how often the alarms and the database sizes are checked: while NOSPACE is
	// active the cluster refuses every write, so the recovery should not wait long to start.
	DefaultCheckPeriod = 30 * time.Second
	// DefaultRecoveryBackoff and DefaultMaxRecoveryBackoff pace NOSPACE recoveries that failed or ended
	// over the quota: each failure doubles the wait up to the maximum.
	DefaultRecoveryBackoff    = time.Minute
	DefaultMaxRecoveryBackoff = 30 * time.Minute
)

// KeepOptions configure Keep.
type KeepOptions struct {
	// Defrag configures every defragmentation run (Needs is set per run).
	Defrag Options
	// Schedule is the cron schedule (5 fields) of defragmentations of every member; "" means none.
	Schedule string
	// CheckPeriod is how often NOSPACE alarms and the Thresholds are checked; 0 means no checks (the
	// schedule only), which also leaves NOSPACE to the operator.
	CheckPeriod time.Duration
	Thresholds  Thresholds
	// CompactRevision bounds the NOSPACE recovery's compaction: given the cluster's revision, it returns
	// the newest revision whose history may go (see the package documentation), or false while none may
	// (the recovery then waits for the next check); nil: the current one.
	CompactRevision func(current int64) (int64, bool)
	// SnapshotStreamSince tells when the full snapshot this sidecar streams from its member now began
	// (false: none streams; nil: never). The stream's read transaction keeps etcd from counting the pages
	// a compaction after its start freed, so in a single-member cluster a figure of the data in use that
	// does not fit while a stream begun before the recovery's first compaction is open is no verdict: the
	// recovery waits for the next check (snapshotStreamWaitLimit at most) instead of reporting the data
	// over the quota and backing off (heldBySnapshotStream).
	SnapshotStreamSince func() (time.Time, bool)
	// RecoveryBackoff and MaxRecoveryBackoff pace failed recoveries; 0 means the defaults.
	RecoveryBackoff, MaxRecoveryBackoff time.Duration
	// Report receives why a recovery cannot disarm NOSPACE (nil: only the metrics say it).
	Report *Report
}

// keeper runs the work of Keep from one goroutine, so that no two defragmentations overlap.
type keeper struct {
	opts    KeepOptions
	metrics *Metrics
	log     logr.Logger

	// backoff is the wait after the last failed recovery (0: the last one succeeded or none ran);
	// retryAt is when the next may start, and failed what the cluster looked like then: a recovery
	// starts before retryAt only when that could end differently now (see changedSince).
	backoff time.Duration
	retryAt time.Time
	failed  recoveryInput
	// snapshotWaitSince is when the recovery began waiting for this sidecar's snapshot stream
	// (errSnapshotStreaming); zero while it does not wait. A wait that ran out keeps its start, so that
	// the attempts after it judge at once.
	snapshotWaitSince time.Time
	// firstCompaction is when this keeper asked for the first compaction of the NOSPACE episode that
	// compacted anything (zero: none yet; cleared once a recovery completes); see heldBySnapshotStream.
	firstCompaction time.Time
}

// recoveryInput is what decides whether a recovery that failed could end differently now. Not the
// revision: deletes (lease expiries, garbage collection) pass the alarm and move it without freeing
// enough, and every check would repeat the recovery.
type recoveryInput struct {
	quotas []int64
	// overQuota: it failed because the data in use did not fit.
	overQuota bool
}

func inputOf(c cluster, err error) recoveryInput {
	in := recoveryInput{overQuota: errors.Is(err, ErrOverQuota)}
	for _, s := range c.spaces() {
		in.quotas = append(in.quotas, s.Quota)
	}
	return in
}

// changedSince tells whether c could recover where the failed recovery did not: a member's quota changed
// (raised), or it failed over the quota and the data in use fits now (data deleted and compacted).
func (in recoveryInput) changedSince(c cluster) bool {
	now := inputOf(c, nil)
	return !slices.Equal(in.quotas, now.quotas) || (in.overQuota && dataFits(c.spaces()) == nil)
}

// Keep keeps the members' databases small until ctx ends (the end of the backup leader's term): it
// defragments every member on the schedule, defragments when a check finds a member over a threshold,
// and recovers from NOSPACE. Runs never overlap; one that finds the cluster unhealthy waits for the next
// scheduled time or check.
func Keep(ctx context.Context, opts KeepOptions) error {
	k, err := newKeeper(opts)
	if err != nil {
		return err
	}
	// The over-quota state is this term's finding; the next backup leader reports its own.
	defer k.reportOverQuota(nil)
	scheduled := make(chan struct{}, 1)
	var c *cron.Cron
	if opts.Schedule != "" {
		sched, err := cron.ParseStandard(opts.Schedule)
		if err != nil {
			return fmt.Errorf("defragmentation schedule %q: %w", opts.Schedule, err)
		}
		c = cron.New()
		c.Schedule(sched, cron.FuncJob(func() {
			select {
			case scheduled <- struct{}{}:
			default: // one is pending already
			}
		}))
		c.Start()
		defer func() { <-c.Stop().Done() }()
	}
	var tick <-chan time.Time
	if opts.CheckPeriod > 0 {
		t := time.NewTicker(opts.CheckPeriod)
		defer t.Stop()
		tick = t.C
		// At once: a new backup leader may take over a recovery the previous one left midway.
		k.check(ctx, time.Now(), false)
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-scheduled:
			k.check(ctx, time.Now(), true)
		case <-tick:
			k.check(ctx, time.Now(), false)
		}
	}
}

func newKeeper(opts KeepOptions) (*keeper, error) {
	if opts.Schedule != "" {
		if _, err := cron.ParseStandard(opts.Schedule); err != nil {
			return nil, fmt.Errorf("defragmentation schedule %q: %w", opts.Schedule, err)
		}
	}
	if opts.RecoveryBackoff <= 0 {
		opts.RecoveryBackoff = DefaultRecoveryBackoff
	}
	if opts.MaxRecoveryBackoff <= 0 {
		opts.MaxRecoveryBackoff = DefaultMaxRecoveryBackoff
	}
	if opts.Defrag.Timeout <= 0 {
		opts.Defrag.Timeout = DefaultTimeout
	}
	return &keeper{opts: opts, metrics: opts.Defrag.Metrics, log: opts.Defrag.Log.WithName("defrag")}, nil
}

func (k *keeper) requestTimeout() time.Duration {
	if k.opts.Defrag.RequestTimeout > 0 {
		return k.opts.Defrag.RequestTimeout
	}
	return 10 * time.Second
}

// check does what the cluster needs now: the NOSPACE recovery while the alarm is active (also at a
// scheduled time: it defragments, and more), else a scheduled run or one a threshold asks for.
func (k *keeper) check(ctx context.Context, now time.Time, scheduled bool) {
	c, err := k.survey(ctx)
	if err != nil {
		if ctx.Err() == nil {
			k.log.Info("Checking the database sizes failed, trying again later", "error", err.Error())
		}
		return
	}
	if len(c.noSpace()) > 0 {
		k.recoverIfDue(ctx, now, c)
		return
	}
	k.recovered()
	trigger, dopts := TriggerSchedule, k.opts.Defrag
	if !scheduled {
		if trigger = k.opts.Thresholds.trigger(c.spaces()); trigger == "" {
			return
		}
		dopts.Needs = k.opts.Thresholds.needs
		k.log.Info("Defragmenting the members over a threshold", "trigger", trigger, "spaces", c.spaces())
	}
	res, err := Run(ctx, dopts)
	if err != nil {
		if ctx.Err() == nil {
			k.log.Error(err, "Defragmentation did not complete", "trigger", trigger)
		}
		return
	}
	if len(res.Members) > 0 {
		k.metrics.ran(trigger)
	}
}

// recoverIfDue runs the NOSPACE recovery unless it is backing off after a failure and nothing that
// could change its outcome changed.
func (k *keeper) recoverIfDue(ctx context.Context, now time.Time, c cluster) {
	if k.backoff > 0 && now.Before(k.retryAt) && !k.failed.changedSince(c) {
		return
	}
	k.log.Info("NOSPACE alarm active: compacting, defragmenting and disarming", "alarms", len(c.noSpace()), "revision", c.revision, "spaces", c.spaces())
	err := k.recoverNoSpace(ctx, c)
	if ctx.Err() != nil {
		return // the term ended; the next backup leader starts over
	}
	streaming := errors.Is(err, errSnapshotStreaming)
	if !streaming {
		k.snapshotWaitSince = time.Time{} // any other outcome ends a wait for the snapshot stream
	}
	switch {
	case err == nil:
		k.recovered()
		k.log.Info("NOSPACE recovery completed: writes are accepted again")
		return
	case errors.Is(err, errCompactionDeferred):
		k.log.Info("NOSPACE recovery waits for the next check", "reason", err.Error())
		return
	case streaming && k.mayWaitForSnapshotStream(now):
		k.log.Info("NOSPACE recovery waits for the next check", "reason", err.Error(), "waitingSince", k.snapshotWaitSince)
		return
	}
	k.backoff = min(max(2*k.backoff, k.opts.RecoveryBackoff), k.opts.MaxRecoveryBackoff)
	k.retryAt, k.failed = now.Add(k.backoff), inputOf(c, err)
	if streaming {
		k.reportOverQuota(err)
		k.log.Error(err, "NOSPACE recovery stopped waiting for this sidecar's full snapshot: the data in use etcd reports does not fit",
			"waitedSince", k.snapshotWaitSince, "nextAttemptAfter", k.backoff)
		return
	}
	if errors.Is(err, ErrOverQuota) {
		k.reportOverQuota(err)
		k.log.Error(err, "NOSPACE recovery cannot disarm the alarm: the cluster refuses writes until data is deleted or the quota (spec.etcd.quota) is raised",
			"nextAttemptAfter", k.backoff)
		return
	}
	k.log.Error(err, "NOSPACE recovery did not complete", "nextAttemptAfter", k.backoff)
}

// snapshotStreamWaitLimit bounds how long the NOSPACE recovery waits for this sidecar's full snapshots
// (errSnapshotStreaming) before it judges the figure of the data in use as it is: a snapshot whose upload
// hangs must not hide data over the quota for good. A full snapshot of the largest database etcd allows
// (8 GiB) takes a few minutes at an object store's usual throughput.
const snapshotStreamWaitLimit = 10 * time.Minute

// mayWaitForSnapshotStream tells whether the recovery may still wait for this sidecar's snapshot stream
// at now; the wait begins at its first call after another outcome, and one that ran out stays over.
func (k *keeper) mayWaitForSnapshotStream(now time.Time) bool {
	if k.snapshotWaitSince.IsZero() {
		k.snapshotWaitSince = now
	}
	return now.Sub(k.snapshotWaitSince) < snapshotStreamWaitLimit
}

// recovered clears the state of failed recoveries.
func (k *keeper) recovered() {
	k.backoff, k.retryAt, k.failed, k.firstCompaction = 0, time.Time{}, recoveryInput{}, time.Time{}
	k.reportOverQuota(nil)
}

// reportOverQuota says (err: why) or takes back (nil) that NOSPACE cannot be disarmed, in the metrics and
// the Report.
func (k *keeper) reportOverQuota(err error) {
	k.metrics.setOverQuota(err != nil)
	reason := ""
	if err != nil {
		reason = err.Error()
	}
	k.opts.Report.setOverQuota(reason)
}
