package defrag

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// refreshCommits bounds how many times the NOSPACE recovery makes every member commit before it believes
// a figure of the data in use that does not fit. Once no read that blocks the release is open any more,
// etcd's figure counts the freed pages after two commits, three when etcd's own read transaction is
// still being rolled back at the first (see surveyInUse).
const refreshCommits = 4

// refreshPause comes before each refresh commit. It gives etcd's asynchronous rollback of its previous
// read transaction the time to run, and lets the commit come after etcd's backend batch interval (100 ms
// by default), so that each refresh is a commit of its own.
const refreshPause = 100 * time.Millisecond

// refreshAlarmMemberID is the member ID of the NOSPACE alarm the refresh raises and clears. etcd never
// gives a member the ID 0 (raft's "no node"), so the refresh's alarm is told apart from every member's
// own and clearing it leaves theirs active.
const refreshAlarmMemberID = 0

// errNoSpaceGone stops the refresh: no member's NOSPACE alarm is active any more (disarmed meanwhile),
// and raising one, even for a moment, would refuse writes again.
var errNoSpaceGone = errors.New("no member's NOSPACE alarm is active any more")

// surveyInUse surveys the cluster for dataFits after a compaction. etcd's figure of the data in use
// (Status' DbSizeInUse, computed from bbolt's free page count when etcd begins a transaction) misses
// the pages a compaction freed until bbolt has released them and a write transaction after the release
// has ended. bbolt releases them when a write transaction begins while no read transaction that began
// up to the freeing commit is open — a snapshot stream or a long range open across the compaction, or
// etcd's own read transaction, which etcd begins after every commit and rolls back asynchronously at the
// next one. While NOSPACE refuses writes no member may commit again, and the figure can stay as high as
// before the compaction for as long as the alarm lasts. So a figure that does not fit is read again
// after every member committed (refreshInUse), up to refreshCommits times.
func (k *keeper) surveyInUse(ctx context.Context) (cluster, error) {
	c, err := k.survey(ctx)
	for attempt := range refreshCommits {
		if err != nil || dataFits(c.spaces()) == nil {
			break
		}
		k.log.Info("NOSPACE recovery: the data in use reported does not fit; making every member commit and reading it again",
			"attempt", attempt+1, "spaces", c.spaces())
		if rerr := k.refreshInUse(ctx); rerr != nil {
			k.log.Info("NOSPACE recovery: could not make the members commit; judging the data in use by the figures they report", "error", rerr.Error())
			break
		}
		c, err = k.survey(ctx)
	}
	return c, err
}

// refreshInUse makes every member commit its database once. Under NOSPACE etcd refuses every put; an
// alarm is not refused: it raises a NOSPACE alarm for refreshAlarmMemberID and clears it, which every
// member applies and commits (the clear deletes from the alarm table, and etcd commits a delete at once).
// It raises only while a member's own NOSPACE alarm is active, so that a second one changes nothing. The
// clear is sent whatever the raise returned (a raise that timed out may have been applied) and outlives
// ctx, so the refresh's alarm is not left behind when the term ends in between; a sidecar that dies in
// between leaves it to the next backup leader's recovery, which disarms every NOSPACE alarm.
func (k *keeper) refreshInUse(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(refreshPause):
	}
	cli := k.opts.Defrag.Client
	rctx, cancel := context.WithTimeout(ctx, k.requestTimeout())
	defer cancel()
	active, err := memberNoSpaceActive(rctx, cli)
	if err != nil {
		return err
	}
	if !active {
		return errNoSpaceGone
	}
	_, raiseErr := etcdserverpb.NewMaintenanceClient(cli.ActiveConnection()).Alarm(rctx, &etcdserverpb.AlarmRequest{
		Action: etcdserverpb.AlarmRequest_ACTIVATE, MemberID: refreshAlarmMemberID, Alarm: etcdserverpb.AlarmType_NOSPACE,
	})
	cctx, ccancel := context.WithTimeout(context.WithoutCancel(ctx), k.requestTimeout())
	defer ccancel()
	_, clearErr := cli.AlarmDisarm(cctx, &clientv3.AlarmMember{MemberID: refreshAlarmMemberID, Alarm: etcdserverpb.AlarmType_NOSPACE})
	err = errors.Join(raiseErr, clearErr)
	k.metrics.step(stepRefresh, err)
	if err != nil {
		return fmt.Errorf("raising and clearing a NOSPACE alarm of member %d: %w", refreshAlarmMemberID, err)
	}
	return nil
}

// memberNoSpaceActive tells whether a member's own NOSPACE alarm is active.
func memberNoSpaceActive(ctx context.Context, cli *clientv3.Client) (bool, error) {
	resp, err := cli.AlarmList(ctx)
	if err != nil {
		return false, fmt.Errorf("listing the alarms: %w", err)
	}
	return slices.ContainsFunc(cluster{alarms: resp.Alarms}.noSpace(), func(a *etcdserverpb.AlarmMember) bool {
		return a.GetMemberID() != refreshAlarmMemberID
	}), nil
}
