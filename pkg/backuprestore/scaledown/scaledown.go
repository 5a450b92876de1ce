// Package scaledown removes etcd members that the StatefulSet no longer has: after a scale-down the
// pods with ordinal ≥ replicas are gone, but their members stay in the etcd membership and count
// against quorum until someone removes them. Only the backup leader runs it (seed 002, "Work-flows only
// on the leading member").
//
// Safety rules, re-checked before every single removal:
//   - a member is superfluous only if its name ends in an ordinal (<etcd>-<i>, <prefix>-<etcd>-<i>)
//     that is ≥ the cluster size of the configuration's initial-cluster; unnamed members (learners that
//     never started) are left to the member that added itself;
//   - the local member and the last member are never removed;
//   - a removal that would leave fewer healthy voting members than the quorum of the remaining
//     membership is not done (etcd's strict reconfiguration check is a second guard).
package scaledown

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/initializer"
)

// DefaultPeriod is how often the leader looks for superfluous members.
const DefaultPeriod = time.Minute

// Options configure the cleanup.
type Options struct {
	// Client reaches the cluster (the local member is enough).
	Client *clientv3.Client
	// ClusterSize is the number of members in the configuration's initial-cluster.
	ClusterSize int
	// LocalMemberID is this sidecar's etcd member.
	LocalMemberID uint64
	// Timeout bounds each request; 0 means 5s.
	Timeout time.Duration
	Log     logr.Logger
}

// Removal is a member that was removed.
type Removal struct {
	ID   uint64
	Name string
}

// Cleanup removes every superfluous member that may be removed safely, highest ordinal first, and
// returns what it removed. A member it may not remove (quorum) is skipped with a log line; the next
// run tries again.
func Cleanup(ctx context.Context, opts Options) ([]Removal, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = 5 * time.Second
	}
	log := opts.Log.WithName("scaledown")
	var removed []Removal
	for {
		members, err := list(ctx, opts)
		if err != nil {
			return removed, err
		}
		victim := pick(members, opts)
		if victim == nil {
			return removed, nil
		}
		if ok, why := safeToRemove(ctx, opts, members, victim); !ok {
			log.Info("Not removing a superfluous member now", "member", victim.GetName(), "reason", why)
			return removed, nil
		}
		rctx, cancel := context.WithTimeout(ctx, opts.Timeout)
		_, err = opts.Client.MemberRemove(rctx, victim.GetID())
		cancel()
		if errors.Is(err, rpctypes.ErrUnhealthy) || errors.Is(err, rpctypes.ErrGRPCUnhealthy) {
			// etcd's own guard: members connected too recently; the next run tries again.
			log.Info("etcd refused the removal for now", "member", victim.GetName(), "reason", err.Error())
			return removed, nil
		}
		if err != nil {
			return removed, fmt.Errorf("removing member %s: %w", victim.GetName(), err)
		}
		log.Info("Removed a member beyond the cluster size", "member", victim.GetName(), "clusterSize", opts.ClusterSize)
		removed = append(removed, Removal{ID: victim.GetID(), Name: victim.GetName()})
	}
}

// Run calls Cleanup every period until ctx ends (the end of a leadership term).
func Run(ctx context.Context, opts Options, period time.Duration) {
	if period <= 0 {
		period = DefaultPeriod
	}
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		if _, err := Cleanup(ctx, opts); err != nil && ctx.Err() == nil {
			opts.Log.Error(err, "Member cleanup failed")
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func list(ctx context.Context, opts Options) ([]*etcdserverpb.Member, error) {
	lctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	resp, err := opts.Client.MemberList(lctx)
	if err != nil {
		return nil, fmt.Errorf("listing members: %w", err)
	}
	return resp.Members, nil
}

// pick returns the superfluous member with the highest ordinal, or nil.
func pick(members []*etcdserverpb.Member, opts Options) *etcdserverpb.Member {
	if len(members) <= 1 {
		return nil
	}
	var victim *etcdserverpb.Member
	best := -1
	for _, m := range members {
		ord := initializer.Ordinal(m.GetName())
		if m.GetName() == "" || m.GetID() == opts.LocalMemberID || ord < opts.ClusterSize || ord <= best {
			continue
		}
		victim, best = m, ord
	}
	return victim
}

// safeToRemove checks that the voting members left after removing victim still have a healthy quorum.
func safeToRemove(ctx context.Context, opts Options, members []*etcdserverpb.Member, victim *etcdserverpb.Member) (bool, string) {
	voting, healthy := 0, 0
	for _, m := range members {
		if m.GetID() == victim.GetID() || m.GetIsLearner() {
			continue
		}
		voting++
		if memberHealthy(ctx, opts, m) {
			healthy++
		}
	}
	if quorum := voting/2 + 1; healthy < quorum {
		return false, fmt.Sprintf("only %d of the remaining %d voting members are healthy, quorum is %d", healthy, voting, quorum)
	}
	return true, ""
}

func memberHealthy(ctx context.Context, opts Options, m *etcdserverpb.Member) bool {
	for _, ep := range m.GetClientURLs() {
		sctx, cancel := context.WithTimeout(ctx, opts.Timeout)
		_, err := opts.Client.Status(sctx, ep)
		cancel()
		if err == nil {
			return true
		}
	}
	return false
}
