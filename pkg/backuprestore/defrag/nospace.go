package defrag

import (
	"context"
	"errors"
	"fmt"
	"strings"

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
// and defragmentation: the NOSPACE alarm stays until data is deleted or the quota is raised.
var ErrOverQuota = errors.New("live data over the quota after compaction and defragmentation")

// Recovery steps, the step label of etcdbr_nospace_recovery_steps_total.
const (
	stepCompact    = "compact"
	stepDefragment = "defragment"
	stepDisarm     = "disarm"
)

// overDisarmLimit tells whether a member's database file is too big to disarm NOSPACE.
func overDisarmLimit(s Space) bool {
	return s.Quota > 0 && float64(s.DBSize) >= DisarmBelow*float64(s.Quota)
}

// recoverNoSpace frees the space of a cluster with an active NOSPACE alarm and disarms it:
//  1. compact to the revision compactTo allows (the cluster's revision does not move: writes are refused);
//  2. defragment the members over the disarm limit, in Run's order (followers first, the leader last after
//     moving leadership, each only while every member is healthy);
//  3. disarm every NOSPACE alarm once every member's file is under the disarm limit, else ErrOverQuota.
//
// Each step is logged and counted. It is idempotent: a new backup leader repeating it after the previous
// one's term ended midway finds the compaction done and defragments only the members still too big.
func (k *keeper) recoverNoSpace(ctx context.Context, c cluster) error {
	rev := c.revision
	if k.opts.CompactRevision != nil {
		rev = min(rev, k.opts.CompactRevision(rev))
	}
	if rev > 0 {
		if err := k.compact(ctx, rev); err != nil {
			return err
		}
	}

	dopts := k.opts.Defrag
	dopts.Needs = overDisarmLimit
	res, err := Run(ctx, dopts)
	k.metrics.step(stepDefragment, err)
	if err != nil {
		return fmt.Errorf("defragmenting: %w", err)
	}
	if len(res.Members) > 0 {
		k.metrics.ran(TriggerNoSpace)
	}
	k.log.Info("NOSPACE recovery: defragmented the members over the disarm limit", "members", memberNames(res.Members))

	sctx, cancel := context.WithTimeout(ctx, k.requestTimeout())
	after, err := survey(sctx, k.opts.Defrag.Client, k.opts.Defrag.FallbackQuota)
	cancel()
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
		return fmt.Errorf("%w (%.0f%% of the quota needed to disarm): %s", ErrOverQuota, DisarmBelow*100, strings.Join(over, "; "))
	}
	return k.disarm(ctx, after.noSpace())
}

// compact compacts the history up to rev and waits until the compaction is applied to the database, so
// that the defragmentation after it finds the pages free. A revision compacted already is no error.
func (k *keeper) compact(ctx context.Context, rev int64) error {
	cctx, cancel := context.WithTimeout(ctx, k.opts.Defrag.Timeout)
	defer cancel()
	_, err := k.opts.Defrag.Client.Compact(cctx, rev, clientv3.WithCompactPhysical())
	if errors.Is(err, rpctypes.ErrCompacted) {
		err = nil
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
