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

// tolerated tells whether an active alarm leaves the cluster healthy enough to defragment. NOSPACE does:
// defragmentation is what frees the space (after a compaction), so postponing it for NOSPACE would keep
// the cluster refusing writes until someone intervenes. Every other alarm (CORRUPT) postpones it.
func tolerated(a *etcdserverpb.AlarmMember) bool {
	return a.GetAlarm() == etcdserverpb.AlarmType_NOSPACE
}

// Options configure a run.
type Options struct {
	// Client reaches the cluster; per-member requests go to each member's client URL with its TLS.
	Client *clientv3.Client
	// LocalEndpoint is the local member's client endpoint (the sidecar's --endpoints, "" when none): the
	// local member is asked there instead of at its advertised client URL. That URL names the member's pod
	// in the seed's DNS, whose cache keeps an answer for up to its TTL (30 s on Gardener's seeds): asked
	// from the member itself right before its pod is replaced, as a check every 30 s keeps doing, the cache
	// hands the old pod's address to everyone who asks in the next 30 s — the members a scale-up starts
	// after the first member's peer-TLS roll among them, which then cannot reach it.
	LocalEndpoint string
	// ClientTLS is the client TLS of the members' client URLs (nil: plain); the leadership transfer
	// needs a connection of its own to the leader.
	ClientTLS *tls.Config
	// Timeout bounds each member's defragmentation; 0 means DefaultTimeout.
	Timeout time.Duration
	// RequestTimeout bounds status, alarm and leadership requests; 0 means 10s.
	RequestTimeout time.Duration
	// BeforeDefragment, if set, is told about each member right before it is defragmented.
	BeforeDefragment func(ctx context.Context, m Member)
	// AfterDefrag, if set, runs after every member was defragmented (a full snapshot); not when Needs
	// left every member out.
	AfterDefrag func(ctx context.Context) error
	// Needs, if set, picks the members to defragment from their Space before the run; the others are left
	// alone, and leadership stays where it is when the leader is left out. nil: every member. The NOSPACE
	// recovery defragments only the members over the disarm limit, so that a run a new backup leader
	// repeats after the previous one moved leadership away (ending its term) does not move it again.
	Needs func(Space) bool
	// FallbackQuota is the quota of a member whose Status does not report one (etcd before 3.6, e.g. while
	// a data version steps through older etcds or under an upstream etcd-wrapper image): the configured
	// --quota-backend-bytes; 0 means etcd's default.
	FallbackQuota int64
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
	all, leader, err := r.healthy(ctx)
	if err != nil {
		return res, err
	}
	members := slices.DeleteFunc(slices.Clone(all), func(m memberSpace) bool { return opts.Needs != nil && !opts.Needs(m.space) })
	if len(members) == 0 {
		return res, nil
	}
	followers := slices.DeleteFunc(slices.Clone(members), func(m memberSpace) bool { return m.member.GetID() == leader.GetID() })
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
	if len(followers) < len(members) { // the leader's turn
		leaderSpace := all[slices.IndexFunc(all, func(m memberSpace) bool { return m.member.GetID() == leader.GetID() })]
		if len(all) > 1 {
			others := slices.DeleteFunc(slices.Clone(all), func(m memberSpace) bool { return m.member.GetID() == leader.GetID() })
			to, err := r.moveLeadership(ctx, leaderSpace, others)
			if err != nil {
				return res, err
			}
			res.MovedLeaderTo = to
			if _, _, err := r.healthy(ctx); err != nil {
				return res, err
			}
		}
		m, err := r.defragment(ctx, leaderSpace)
		if err != nil {
			return res, err
		}
		res.Members = append(res.Members, m)
	}
	if opts.AfterDefrag != nil {
		if err := opts.AfterDefrag(ctx); err != nil {
			return res, fmt.Errorf("after defragmentation: %w", err)
		}
	}
	return res, nil
}

// memberSpace is a member with its Space at the last health check.
type memberSpace struct {
	member *etcdserverpb.Member
	space  Space
}

// healthy checks that every member answers and no alarm but a tolerated one is active, and returns the
// members with their space and the current leader.
func (r runner) healthy(ctx context.Context) ([]memberSpace, *etcdserverpb.Member, error) {
	rctx, cancel := context.WithTimeout(ctx, r.opts.RequestTimeout)
	defer cancel()
	c, err := survey(rctx, r.opts.Client, r.opts.FallbackQuota, r.opts.LocalEndpoint)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrUnhealthy, err)
	}
	for _, a := range c.alarms {
		if !tolerated(a) {
			return nil, nil, fmt.Errorf("%w: alarm %s active on member %x", ErrUnhealthy, a.GetAlarm(), a.GetMemberID())
		}
	}
	if c.leader == nil {
		return nil, nil, fmt.Errorf("%w: no leader", ErrUnhealthy)
	}
	return c.members, c.leader, nil
}

// defragment defragments one member within the timeout, at the endpoint the survey asked it at.
func (r runner) defragment(ctx context.Context, ms memberSpace) (Member, error) {
	m, ep := ms.member, ms.space.Endpoint
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

// moveLeadership hands leadership from leader to the first voting member of others and waits until the
// old leader sees the new one. MoveLeader must be served by the leader itself, so it is sent there (at the
// endpoint the survey asked it at).
func (r runner) moveLeadership(ctx context.Context, leaderSpace memberSpace, others []memberSpace) (uint64, error) {
	leader, endpoint := leaderSpace.member, leaderSpace.space.Endpoint
	i := slices.IndexFunc(others, func(m memberSpace) bool { return !m.member.GetIsLearner() })
	if i < 0 {
		return 0, fmt.Errorf("%w: no voting follower to hand leadership to", ErrUnhealthy)
	}
	target := others[i].member
	cli, err := clientv3.New(clientv3.Config{
		Endpoints: []string{endpoint}, DialTimeout: r.opts.RequestTimeout,
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
		st, err := cli.Status(mctx, endpoint)
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
