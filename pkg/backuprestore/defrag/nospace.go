package defrag

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// DisarmBelow is the share of its quota every member's database file must be under before the NOSPACE
// alarm is disarmed. etcd raises the alarm again on the first write that does not fit, so disarming a
// database that is just under its quota would only let a few writes through; the margin leaves room for
// the writes until the next check (and the quota threshold's defragmentation) comes.
const DisarmBelow = 0.9

// ErrOverQuota means the data in use does not fit under DisarmBelow of the quota even after compaction
// (and defragmentation): the NOSPACE alarm stays until data is deleted or the quota is raised.
var ErrOverQuota = errors.New("live data over the quota after compaction")

// errCompactionDeferred means the history may not be compacted yet (KeepOptions.CompactRevision) and the
// data in use does not fit without that: the recovery changed nothing, and the next check tries again.
var errCompactionDeferred = errors.New("the history may not be compacted yet")

// errSnapshotStreaming means the data in use of a single-member cluster did not fit while a full snapshot
// of this sidecar, begun before the recovery's compaction, streamed from the member
// (KeepOptions.SnapshotStreamSince, heldBySnapshotStream): the stream's open read may hide what the
// compaction freed. The recovery changed nothing beyond the compaction; the next check tries again, for
// snapshotStreamWaitLimit at most. It wraps the ErrOverQuota that the figure gave.
var errSnapshotStreaming = errors.New("a full snapshot begun before the compaction streams from the member: its open read may hide the pages the compaction freed")

// Recovery steps, the step label of etcdbr_nospace_recovery_steps_total.
const (
	stepCompact    = "compact"
	stepDefragment = "defragment"
	stepDisarm     = "disarm"
	stepSnapshot   = "snapshot"
	stepRefresh    = "refresh"
)

// overDisarmLimit tells whether a member's database file is too big to disarm NOSPACE.
func overDisarmLimit(s Space) bool {
	return s.Quota > 0 && float64(s.DBSize) >= DisarmBelow*float64(s.Quota)
}

// dataFits returns ErrOverQuota unless the data in use fits under the disarm limit of every member, i.e.
// unless defragmentation can bring every file under it. The data's size is the smallest DBSizeInUse a
// member reports: every member holds the same data, and a member's figure errs high — pages a compaction
// freed count as in use until a later write transaction of that member (surveyInUse). A figure too low
// (a member that has not committed its last writes, within etcd's backend batch interval) only lets the
// recovery go on to defragment, after which the disarm check judges the files themselves.
func dataFits(spaces []Space) error {
	if len(spaces) == 0 {
		return nil
	}
	inUse := slices.MinFunc(spaces, func(a, b Space) int { return cmp.Compare(a.DBSizeInUse, b.DBSizeInUse) }).DBSizeInUse
	var over []string
	for _, s := range spaces {
		if s.Quota > 0 && float64(inUse) >= DisarmBelow*float64(s.Quota) {
			over = append(over, fmt.Sprintf("%s: quota %d bytes", s.Name, s.Quota))
		}
	}
	if len(over) > 0 {
		return fmt.Errorf("%w: %d bytes in use, %.0f%% of the quota needed to disarm: %s", ErrOverQuota, inUse, DisarmBelow*100, strings.Join(over, "; "))
	}
	return nil
}

// recoverNoSpace frees the space of a cluster with an active NOSPACE alarm and disarms it:
//  1. compact to the revision CompactRevision allows (the cluster's revision hardly moves: only deletes
//     pass the alarm); while it allows none, go on without compacting (a previous backup leader may have
//     compacted already);
//  2. ErrOverQuota if the data in use does not fit under the disarm limit, also after every member
//     committed again (surveyInUse: etcd's figure may miss what the compaction freed): defragmenting
//     could not help, and it would stall every member and move leadership (ending the backup leader's
//     term, whose successor would repeat it) for nothing. Without the compaction the history may be
//     what does not fit: errCompactionDeferred, having changed nothing. In a single-member cluster a full
//     snapshot of this sidecar begun before the recovery's first compaction may hide what that freed
//     while it streams: errSnapshotStreaming, for snapshotStreamWaitLimit at most;
//  3. defragment the members over the disarm limit, in Run's order (followers first, the leader last after
//     moving leadership, each only while every member is healthy);
//  4. disarm every NOSPACE alarm once every member's file is under the disarm limit, else ErrOverQuota;
//  5. take a full snapshot (Options.AfterDefrag) of the smaller database. Writes are accepted again before
//     it: a failed snapshot (the store down) is logged and counted, it neither fails the recovery nor
//     re-arms anything.
//
// Each step is logged and counted. It is idempotent: a new backup leader repeating it after the previous
// one's term ended midway finds the compaction done and defragments only the members still too big.
func (k *keeper) recoverNoSpace(ctx context.Context, c cluster) error {
	rev, mayCompact := c.revision, true
	if k.opts.CompactRevision != nil {
		var allowed int64
		allowed, mayCompact = k.opts.CompactRevision(rev)
		rev = min(rev, allowed)
	}
	if mayCompact && rev > 0 {
		if err := k.compact(ctx, rev); err != nil {
			return err
		}
	}
	compacted, err := k.surveyInUse(ctx)
	if err != nil {
		return fmt.Errorf("checking the data in use after compacting: %w", err)
	}
	if err := dataFits(compacted.spaces()); err != nil {
		if !mayCompact {
			// History may be what does not fit: the verdict waits for the compaction.
			return fmt.Errorf("%w (%v)", errCompactionDeferred, err)
		}
		if k.heldBySnapshotStream(compacted) {
			return fmt.Errorf("%w: %w", errSnapshotStreaming, err)
		}
		return err
	}

	dopts := k.opts.Defrag
	dopts.Needs = overDisarmLimit
	dopts.AfterDefrag = nil // after disarming, below
	res, err := Run(ctx, dopts)
	k.metrics.step(stepDefragment, err)
	if err != nil {
		return fmt.Errorf("defragmenting: %w", err)
	}
	if len(res.Members) > 0 {
		k.metrics.ran(TriggerNoSpace)
	}
	k.log.Info("NOSPACE recovery: defragmented the members over the disarm limit", "members", memberNames(res.Members))

	after, err := k.survey(ctx)
	if err != nil {
		k.metrics.step(stepDisarm, err)
		return fmt.Errorf("checking the database sizes before disarming: %w", err)
	}
	var over []string
	for _, s := range after.spaces() {
		if overDisarmLimit(s) {
			over = append(over, fmt.Sprintf("%s: file %d bytes, in use %d bytes, quota %d bytes", s.Name, s.DBSize, s.DBSizeInUse, s.Quota))
		}
	}
	if len(over) > 0 {
		return fmt.Errorf("%w and defragmentation (%.0f%% of the quota needed to disarm): %s", ErrOverQuota, DisarmBelow*100, strings.Join(over, "; "))
	}
	if err := k.disarm(ctx, after.noSpace()); err != nil {
		return err
	}
	k.snapshot(ctx)
	return nil
}

// heldBySnapshotStream tells whether this sidecar's full snapshot may be what keeps c's figure of the data
// in use too high: c has a single member, from which the sidecar streams, and the stream began before
// this keeper's first compaction of the episode (firstCompaction), so it holds the pages that freed. A
// stream begun later holds none of them, nor does any stream of this term when a previous backup leader
// compacted. With more members it cannot be: dataFits takes the smallest figure, and the other members'
// count what the compaction freed once they committed (surveyInUse).
func (k *keeper) heldBySnapshotStream(c cluster) bool {
	if k.opts.SnapshotStreamSince == nil || len(c.spaces()) != 1 || k.firstCompaction.IsZero() {
		return false
	}
	since, open := k.opts.SnapshotStreamSince()
	return open && since.Before(k.firstCompaction)
}

// snapshot takes the full snapshot after a recovery; its failure is only logged and counted, as the
// alarm is disarmed already and the snapshotter's schedule takes the next one.
func (k *keeper) snapshot(ctx context.Context) {
	if k.opts.Defrag.AfterDefrag == nil {
		return
	}
	err := k.opts.Defrag.AfterDefrag(ctx)
	k.metrics.step(stepSnapshot, err)
	if err != nil {
		if ctx.Err() == nil {
			k.log.Error(err, "NOSPACE recovery: the full snapshot after it failed; the alarm stays disarmed")
		}
		return
	}
	k.log.Info("NOSPACE recovery: took a full snapshot")
}

// survey looks at the cluster within the request timeout.
func (k *keeper) survey(ctx context.Context) (cluster, error) {
	sctx, cancel := context.WithTimeout(ctx, k.requestTimeout())
	defer cancel()
	return survey(sctx, k.opts.Defrag.Client, k.opts.Defrag.FallbackQuota, k.opts.Defrag.LocalEndpoint)
}

// compact compacts the history up to rev and waits until the compaction is applied to the database, so
// that the defragmentation after it finds the pages free. A revision compacted already is no error.
func (k *keeper) compact(ctx context.Context, rev int64) error {
	cctx, cancel := context.WithTimeout(ctx, k.opts.Defrag.Timeout)
	defer cancel()
	start := time.Now()
	_, err := k.opts.Defrag.Client.Compact(cctx, rev, clientv3.WithCompactPhysical())
	switch {
	case errors.Is(err, rpctypes.ErrCompacted):
		err = nil // compacted before: by an earlier attempt, a previous backup leader or etcd itself
	case err == nil && k.firstCompaction.IsZero():
		k.firstCompaction = start
	}
	k.metrics.step(stepCompact, err)
	if err != nil {
		return fmt.Errorf("compacting to revision %d: %w", rev, err)
	}
	k.log.Info("NOSPACE recovery: compacted the history", "revision", rev)
	return nil
}

// disarm disarms the NOSPACE alarms, each for the member that raised it.
func (k *keeper) disarm(ctx context.Context, alarms []*etcdserverpb.AlarmMember) error {
	dctx, cancel := context.WithTimeout(ctx, k.requestTimeout())
	defer cancel()
	for _, a := range alarms {
		_, err := k.opts.Defrag.Client.AlarmDisarm(dctx, &clientv3.AlarmMember{MemberID: a.GetMemberID(), Alarm: a.GetAlarm()})
		k.metrics.step(stepDisarm, err)
		if err != nil {
			return fmt.Errorf("disarming NOSPACE of member %x: %w", a.GetMemberID(), err)
		}
		k.log.Info("NOSPACE recovery: disarmed the alarm", "member", fmt.Sprintf("%x", a.GetMemberID()))
	}
	return nil
}

func memberNames(ms []Member) []string {
	out := make([]string, 0, len(ms))
	for _, m := range ms {
		out = append(out, m.Name)
	}
	return out
}
