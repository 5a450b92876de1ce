package scaledown

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/initializer"
)

// handOverIfSuperfluous moves the raft leadership away from the local member when it is itself beyond the
// cluster size and no other superfluous member is left to remove. The backup leadership follows the raft
// leadership, so the kept member's sidecar continues the cleanup and removes this member; removing
// itself instead would leave the cluster leaderless for an election and this sidecar without the term it
// runs in. The transferee is the kept healthy voting member with the lowest ordinal; nothing happens when
// the members left after this one's removal would not be a healthy quorum (the next run tries again).
func handOverIfSuperfluous(ctx context.Context, opts Options, members []*etcdserverpb.Member, size int) error {
	var local *etcdserverpb.Member
	for _, m := range members {
		if m.GetID() == opts.LocalMemberID {
			local = m
		}
	}
	if local == nil || len(members) <= 1 || initializer.Ordinal(local.GetName()) < size {
		return nil
	}
	log := opts.Log.WithName("scaledown")
	if ok, why := safeToRemove(ctx, opts, members, local); !ok {
		log.Info("Not handing over the leadership of a superfluous member now", "member", local.GetName(), "reason", why)
		return nil
	}
	transferee := keptVoter(ctx, opts, members, size)
	if transferee == nil {
		log.Info("Not handing over the leadership of a superfluous member now: no kept voting member is healthy", "member", local.GetName())
		return nil
	}
	mctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	_, err := opts.Client.MoveLeader(mctx, transferee.GetID())
	if errors.Is(err, rpctypes.ErrNotLeader) || errors.Is(err, rpctypes.ErrGRPCNotLeader) {
		// The leadership moved on since this term began; the term ends at the elector's next poll.
		log.Info("Not handing over the leadership: the local member does not lead any more", "member", local.GetName())
		return nil
	}
	if err != nil {
		return fmt.Errorf("handing the leadership of superfluous member %s to %s: %w", local.GetName(), transferee.GetName(), err)
	}
	log.Info("Handed the leadership to a kept member; its sidecar removes this member", "member", local.GetName(),
		"to", transferee.GetName(), "clusterSize", size)
	return nil
}

// keptVoter is the healthy voting member of the local member's Etcd below the cluster size with the
// lowest ordinal, or nil. A member of an existing cluster the Etcd joined is never chosen: its sidecar
// (if any) does not run this Etcd's cleanup.
func keptVoter(ctx context.Context, opts Options, members []*etcdserverpb.Member, size int) *etcdserverpb.Member {
	base, ok := leaseBase(members, opts.LocalMemberID)
	if !ok {
		return nil
	}
	var best *etcdserverpb.Member
	bestOrd := size
	for _, m := range members {
		ord, own := ownOrdinal(m.GetName(), base)
		if m.GetIsLearner() || !own || ord >= bestOrd || !memberHealthy(ctx, opts, m) {
			continue
		}
		best, bestOrd = m, ord
	}
	return best
}
