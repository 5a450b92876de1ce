package defrag

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-logr/logr"
	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// DefaultTimeout bounds the defragmentation of one member (etcdDefragTimeout): 15m, the Etcd API's default,
// which upstream druid always passes (the upstream sidecar's own default is 8m); ours defaults to it so
// that druid passes the flag only for a value someone chose.
const DefaultTimeout = 15 * time.Minute

// ErrUnhealthy means the run was skipped (or stopped) because the cluster was not fully healthy.
var ErrUnhealthy = errors.New("cluster not healthy, defragmentation postponed")

// Options configure a run.
type Options struct {
	// Client reaches the cluster; per-member requests go to each member's client URL with its TLS.
	Client *clientv3.Client
	// ClientTLS is the client TLS of the members' client URLs (nil: plain); the leadership transfer
	// needs a connection of its own to the leader.
	ClientTLS *tls.Config
	// Timeout bounds each member's defragmentation; 0 means DefaultTimeout.
	Timeout time.Duration
	// RequestTimeout bounds status, alarm and leadership requests; 0 means 10s.
	RequestTimeout time.Duration
	// BeforeDefragment, if set, is told about each member right before it is defragmented.
	BeforeDefragment func(ctx context.Context, m Member)
	// AfterDefrag, if set, runs after every member was defragmented (a full snapshot).
	AfterDefrag func(ctx context.Context) error
	// Metrics, if set, time each member's defragmentation.
	Metrics *Metrics
	Log     logr.Logger
}

// Member is one defragmented member.
type Member struct {
	ID       uint64
	Name     string
	Endpoint string
	// DBSizeBefore and DBSizeAfter are the database file sizes around the defragmentation.
	DBSizeBefore, DBSizeAfter int64
}

// Result lists the members in the order they were defragmented.
type Result struct {
	Members []Member
	// MovedLeaderTo is the member leadership was handed to before the leader's turn (0: not moved).
	MovedLeaderTo uint64
}

type runner struct {
	opts Options
	log  logr.Logger
}

// Run defragments the cluster once, in the order the package documentation gives.
func Run(ctx context.Context, opts Options) (Result, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = 10 * time.Second
	}
	r := runner{opts: opts, log: opts.Log.WithName("defrag")}
	var res Result
	members, leader, err := r.healthy(ctx)
	if err != nil {
		return res, err
	}
	followers := slices.DeleteFunc(slices.Clone(members), func(m *etcdserverpb.Member) bool { return m.GetID() == leader.GetID() })
	for _, f := range followers {
		if _, _, err := r.healthy(ctx); err != nil {
			return res, err
		}
		m, err := r.defragment(ctx, f)
		if err != nil {
			return res, err
		}
		res.Members = append(res.Members, m)
	}
	if len(members) > 1 {
		to, err := r.moveLeadership(ctx, leader, followers)
		if err != nil {
			return res, err
		}
		res.MovedLeaderTo = to
		if _, _, err := r.healthy(ctx); err != nil {
			return res, err
		}
	}
	m, err := r.defragment(ctx, leader)
	if err != nil {
		return res, err
	}
	res.Members = append(res.Members, m)
	if opts.AfterDefrag != nil {
		if err := opts.AfterDefrag(ctx); err != nil {
			return res, fmt.Errorf("after defragmentation: %w", err)
		}
	}
	return res, nil
}

// healthy checks that every member answers and no alarm is active, and returns the members and the
// current leader.
func (r runner) healthy(ctx context.Context) ([]*etcdserverpb.Member, *etcdserverpb.Member, error) {
	rctx, cancel := context.WithTimeout(ctx, r.opts.RequestTimeout)
	defer cancel()
	list, err := r.opts.Client.MemberList(rctx)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: listing members: %v", ErrUnhealthy, err)
	}
	alarms, err := r.opts.Client.AlarmList(rctx)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: listing alarms: %v", ErrUnhealthy, err)
	}
	if len(alarms.Alarms) > 0 {
		return nil, nil, fmt.Errorf("%w: alarm %s active on member %x", ErrUnhealthy, alarms.Alarms[0].GetAlarm(), alarms.Alarms[0].GetMemberID())
	}
	var leader *etcdserverpb.Member
	for _, m := range list.Members {
		if len(m.GetClientURLs()) == 0 {
			return nil, nil, fmt.Errorf("%w: member %x has not started", ErrUnhealthy, m.GetID())
		}
		st, err := r.opts.Client.Status(rctx, m.GetClientURLs()[0])
		if err != nil {
			return nil, nil, fmt.Errorf("%w: member %s does not answer: %v", ErrUnhealthy, m.GetName(), err)
		}
		if st.Leader == m.GetID() {
			leader = m
		}
	}
	if leader == nil {
		return nil, nil, fmt.Errorf("%w: no leader", ErrUnhealthy)
	}
	return list.Members, leader, nil
}

// defragment defragments one member within the timeout.
func (r runner) defragment(ctx context.Context, m *etcdserverpb.Member) (Member, error) {
	ep := m.GetClientURLs()[0]
	out := Member{ID: m.GetID(), Name: m.GetName(), Endpoint: ep}
	sctx, cancel := context.WithTimeout(ctx, r.opts.RequestTimeout)
	if st, err := r.opts.Client.Status(sctx, ep); err == nil {
		out.DBSizeBefore = st.DbSize
	}
	cancel()
	if r.opts.BeforeDefragment != nil {
		r.opts.BeforeDefragment(ctx, out)
	}
	start := time.Now()
	dctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	_, err := r.opts.Client.Defragment(dctx, ep)
	cancel()
	r.opts.Metrics.defragmented(ep, time.Since(start), err)
	if err != nil {
		return out, fmt.Errorf("defragmenting member %s: %w", m.GetName(), err)
	}
	sctx, cancel = context.WithTimeout(ctx, r.opts.RequestTimeout)
	if st, err := r.opts.Client.Status(sctx, ep); err == nil {
		out.DBSizeAfter = st.DbSize
	}
	cancel()
	r.log.Info("Defragmented member", "member", m.GetName(), "dbSizeBefore", out.DBSizeBefore, "dbSizeAfter", out.DBSizeAfter, "took", time.Since(start))
	return out, nil
}

// moveLeadership hands leadership from leader to the first voting follower and waits until the old
// leader sees the new one. MoveLeader must be served by the leader itself, so it is sent there.
func (r runner) moveLeadership(ctx context.Context, leader *etcdserverpb.Member, followers []*etcdserverpb.Member) (uint64, error) {
	i := slices.IndexFunc(followers, func(m *etcdserverpb.Member) bool { return !m.GetIsLearner() })
	if i < 0 {
		return 0, fmt.Errorf("%w: no voting follower to hand leadership to", ErrUnhealthy)
	}
	target := followers[i]
	cli, err := clientv3.New(clientv3.Config{
		Endpoints: []string{leader.GetClientURLs()[0]}, DialTimeout: r.opts.RequestTimeout,
		TLS: r.opts.ClientTLS, Logger: zap.NewNop(),
	})
	if err != nil {
		return 0, err
	}
	defer cli.Close()
	mctx, cancel := context.WithTimeout(ctx, r.opts.RequestTimeout)
	defer cancel()
	if _, err := cli.MoveLeader(mctx, target.GetID()); err != nil {
		return 0, fmt.Errorf("moving leadership from %s to %s: %w", leader.GetName(), target.GetName(), err)
	}
	for {
		st, err := cli.Status(mctx, leader.GetClientURLs()[0])
		if err == nil && st.Leader != 0 && st.Leader != leader.GetID() {
			r.log.Info("Moved leadership before defragmenting the old leader", "from", leader.GetName(), "to", target.GetName())
			return target.GetID(), nil
		}
		select {
		case <-mctx.Done():
			return 0, fmt.Errorf("leadership did not move away from %s: %w", leader.GetName(), mctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}
