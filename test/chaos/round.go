package chaos

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/seedworkflow"
)

// Fault is one kind of disturbance a round injects.
type Fault struct {
	// Name is the fault's column in the table.
	Name string
	// Inject disturbs the cluster and returns once the fault is over (healed, or taken over by the
	// cluster's own healing, e.g. a killed container that the kubelet restarted): what it hit, and an
	// error when the fault could not be injected or did not have the effect it must have. A Fault that
	// needs to assert what happens while it lasts does so here.
	Inject func(ctx context.Context, r *Round) (target string, err error)
	// NoRecovery: druid must start no recovery (no pod deleted, no quorum-loss recovery) in this round.
	NoRecovery bool
	// Quiet: the fault compares the store before and after (the attacks), so no EtcdOpsTask runs while it
	// lasts and it starts once no compaction Job runs.
	Quiet bool
	// After checks what must hold once etcd-main is Ready again (nil: nothing more).
	After func(ctx context.Context, r *Round) error
}

// Round is one fault injected into the running suite.
type Round struct {
	N     int
	Suite *Suite
	Rand  *rand.Rand
	// Start is when the round began (events from then on are the round's).
	Start time.Time
	// Notes collects what the fault observed, for the table.
	Notes []string
}

// Note records an observation of the round.
func (r *Round) Note(format string, args ...any) {
	r.Notes = append(r.Notes, fmt.Sprintf(format, args...))
}

// Result is one line of the table.
type Result struct {
	Round  int
	Fault  string
	Target string
	// FaultFor is how long Inject took: the fault's own duration and the wait for its effect.
	FaultFor time.Duration
	// Acked are the writes acknowledged during the round; TotalAcked those since the writer started, every
	// one of which is checked on every member after the round.
	Acked, TotalAcked int
	// Lost are acknowledged writes that a member does not hold after the round (must be 0).
	Lost int
	// Recoveries is what druid and the kubelets did: restarts, recreated pods, druid's recovery events.
	Recoveries []string
	// ToReady is the time from the end of the fault until etcd-main was Ready again.
	ToReady time.Duration
	Notes   []string
	Err     error
	// Unready: the cluster did not settle before the round or was not Ready after it; later rounds would
	// start from a broken cluster.
	Unready bool
	// OpsTasks are the round's EtcdOpsTasks: the one on the settled cluster, then those during the fault.
	OpsTasks []OpsTask
	// Compactions are the compaction Jobs that finished during the round.
	Compactions []CompactionJob
	// Between: not a fault's round but a step between rounds (the credential rotation after round Round).
	Between bool
}

// RunRound runs one round of f: waits until the suite has settled (not counted), injects f at a random
// moment, waits until etcd-main is Ready, reads every acknowledged write back from every member and
// records what was done to heal the cluster.
func (s *Suite) RunRound(ctx context.Context, n int, f Fault, rng *rand.Rand) Result {
	res := Result{Round: n, Fault: f.Name}
	if err := poll(ctx, "the cluster and druid settled before the round", waitTimeout, s.settled); err != nil {
		res.Err, res.Unready = err, true
		return res
	}
	// The background's failures join the fault's at the end, so that they hide none of its checks.
	var background error
	if s.bg.OpsTasks {
		task, err := s.settledOpsTask(ctx, opsTaskType(n))
		res.OpsTasks, background = append(res.OpsTasks, task), err
	}
	if f.Quiet {
		if err := s.compactions.waitIdle(ctx); err != nil {
			res.Err = errors.Join(background, err)
			return res
		}
	}
	before, err := s.snapshotPods(ctx)
	if err != nil {
		res.Err = errors.Join(background, err)
		return res
	}
	r := &Round{N: n, Suite: s, Rand: rng, Start: time.Now()}
	ackedBefore := s.Writer.AckedCount()
	// A random moment: the writer is somewhere in its stream of writes, etcd somewhere in its batch.
	if err := pause(ctx, time.Duration(rng.Int64N(int64(3*time.Second)))); err != nil {
		res.Err = errors.Join(background, err)
		return res
	}
	begin := time.Now()
	s.windows.begin(begin)
	var tasks *faultTasks
	if s.bg.OpsTasks && !f.Quiet {
		tasks = s.startFaultTasks(ctx)
	}
	target, injectErr := f.Inject(ctx, r)
	res.Target = target
	res.FaultFor = time.Since(begin)
	if injectErr != nil {
		res.Err = fmt.Errorf("injecting: %w", injectErr)
	}
	toReady, err := s.waitEtcdReady(ctx)
	res.ToReady, res.Unready = toReady, err != nil
	if err != nil && res.Err == nil {
		res.Err = err
	}
	res.Acked, res.TotalAcked, res.Lost, err = s.checkWrites(ctx, ackedBefore)
	if err != nil && res.Err == nil {
		res.Err = err
	}
	after, err := s.snapshotPods(ctx)
	if err == nil {
		res.Recoveries = podChanges(before, after)
	}
	events, err := s.druidEvents(ctx, r.Start)
	if err == nil {
		res.Recoveries = append(res.Recoveries, describeEvents(events)...)
		if started := recoveryStarted(events); f.NoRecovery && started != "" && res.Err == nil {
			res.Err = fmt.Errorf("druid started a recovery: %s", started)
		}
	}
	if cond, err := s.recoveryCondition(ctx, r.Start); err == nil && cond != "" {
		res.Recoveries = append(res.Recoveries, cond)
	}
	if f.After != nil && res.Err == nil {
		res.Err = f.After(ctx, r)
	}
	if tasks != nil {
		during, err := tasks.stop(ctx)
		res.OpsTasks = append(res.OpsTasks, during...)
		background = errors.Join(background, err)
	}
	s.windows.end(time.Now())
	res.Compactions, err = s.compactions.collect()
	res.Err = errors.Join(res.Err, background, err)
	res.Notes = r.Notes
	return res
}

// checkWrites reads every write acknowledged so far back from every member: how many were acknowledged
// since ackedBefore and in total, how many are lost, and an error when any is or the read failed.
func (s *Suite) checkWrites(ctx context.Context, ackedBefore int) (acked, total, lost int, err error) {
	all := s.Writer.Acked()
	total, acked = len(all), len(all)-ackedBefore
	missing, err := s.lostWrites(ctx, all)
	if err != nil {
		return acked, total, len(missing), fmt.Errorf("reading the writes back: %w", err)
	}
	if len(missing) > 0 {
		return acked, total, len(missing), fmt.Errorf("%d acknowledged writes lost, e.g. %s", len(missing), strings.Join(missing[:min(5, len(missing))], ", "))
	}
	return acked, total, 0, nil
}

// lostWrites reads the keys under KeyPrefix from every member (linearizable; retried while a member does
// not answer yet, e.g. still catching up) and returns the acknowledged keys that any member lacks, each
// with the members that lack it.
func (s *Suite) lostWrites(ctx context.Context, acked []string) ([]string, error) {
	var perMember map[string]map[string]bool
	err := poll(ctx, "every member answering a linearizable read", waitTimeout, func(ctx context.Context) (string, error) {
		readCtx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		got, err := seedworkflow.KeysPerMember(readCtx, s.Env, etcd.RoleMain, KeyPrefix)
		if err != nil {
			return err.Error(), nil
		}
		if len(got) != members {
			return fmt.Sprintf("%d members with a pod IP", len(got)), nil
		}
		perMember = got
		return "", nil
	})
	if err != nil {
		return nil, err
	}
	lackedBy := map[string][]string{}
	for _, name := range slices.Sorted(maps.Keys(perMember)) {
		for _, k := range seedworkflow.MissingKeys(perMember[name], acked) {
			lackedBy[k] = append(lackedBy[k], name)
		}
	}
	var lost []string
	for _, k := range acked {
		if m := lackedBy[k]; len(m) > 0 {
			lost = append(lost, fmt.Sprintf("%s (not on %s)", k, strings.Join(m, ", ")))
		}
	}
	return lost, nil
}

// pause waits d: a fault's length or a random moment, never a wait for a state (those poll).
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}
