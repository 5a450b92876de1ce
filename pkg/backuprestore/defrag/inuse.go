package defrag

import (
	"context"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// refreshCommits bounds how many commits the NOSPACE recovery makes every member do before it believes
// a figure of the data in use that does not fit.
const refreshCommits = 4

// refreshPause separates two refresh commits: etcd rolls back the read transaction a commit ends
// asynchronously, and a read still open at the next commit keeps the freed pages counted as in use.
const refreshPause = 100 * time.Millisecond

// refreshAlarmMemberID is the member ID of the NOSPACE alarm the refresh raises and clears. etcd never
// gives a member the ID 0 (raft's "no node"), so the refresh's alarm is told apart from every member's
// own and clearing it leaves theirs active.
const refreshAlarmMemberID = 0

// surveyInUse surveys the cluster for dataFits after a compaction. etcd's figure of the data in use
// (Status' DbSizeInUse) counts the pages a compaction freed only once a write transaction of that member
// begins with no read older than the freeing commit still open. A read open across the compaction's last
// commit (a snapshot stream, a long range, or etcd's own read transaction, which each commit rolls back
// asynchronously) makes that commit miss them, and while NOSPACE refuses writes no member commits again:
// the figure can stay as high as before the compaction for as long as the alarm lasts. So a figure that
// does not fit is read again after every member committed (refreshInUse), up to refreshCommits times.
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

// refreshInUse makes every member commit its database once, which is the write transaction that counts
// freed pages as free. Under NOSPACE etcd refuses every put; an alarm is not refused: it raises a NOSPACE
// alarm for refreshAlarmMemberID and clears it. While the cluster's own alarm is active a second one
// changes nothing, and the clear deletes from the alarm table, which etcd commits at once on every member
// that applies it. The clear outlives ctx (the term may end between the two), so the refresh's alarm is
// not left behind; a sidecar that dies in between leaves it to the next backup leader's recovery, which
// disarms every NOSPACE alarm.
func (k *keeper) refreshInUse(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(refreshPause):
	}
	cli := k.opts.Defrag.Client
	rctx, cancel := context.WithTimeout(ctx, k.requestTimeout())
	defer cancel()
	_, err := etcdserverpb.NewMaintenanceClient(cli.ActiveConnection()).Alarm(rctx, &etcdserverpb.AlarmRequest{
		Action: etcdserverpb.AlarmRequest_ACTIVATE, MemberID: refreshAlarmMemberID, Alarm: etcdserverpb.AlarmType_NOSPACE,
	})
	if err == nil {
		cctx, ccancel := context.WithTimeout(context.WithoutCancel(ctx), k.requestTimeout())
		defer ccancel()
		_, err = cli.AlarmDisarm(cctx, &clientv3.AlarmMember{MemberID: refreshAlarmMemberID, Alarm: etcdserverpb.AlarmType_NOSPACE})
	}
	k.metrics.step(stepRefresh, err)
	if err != nil {
		return fmt.Errorf("raising and clearing a NOSPACE alarm of member %d: %w", refreshAlarmMemberID, err)
	}
	return nil
}
