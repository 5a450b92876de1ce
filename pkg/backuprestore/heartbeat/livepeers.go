package heartbeat

import (
	"context"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/client-go/kubernetes"
)

// LivenessWindowBeats is how many heartbeat periods a member lease may go unrenewed before its member
// counts as not alive: one missed or late renewal (a busy node, a slow apiserver) is not a dead member.
const LivenessWindowBeats = 3

// PeerLiveness tells which other members show signs of a serving etcd. A sidecar renews its member's
// lease only after its etcd answered with the member's identity, so a renewal is evidence that the
// member's etcd served moments ago — even when the asking member cannot reach it.
type PeerLiveness struct {
	Kubernetes kubernetes.Interface
	Namespace  string
	// Heartbeat is the members' lease renewal period.
	Heartbeat time.Duration
	// Now is this node's clock; nil means time.Now.
	Now func() time.Time
}

// LivePeers returns the members among names (their leases are named after them) that renewed recently.
// A lease that does not exist, was never renewed, or was reset empty (druid's quorum-loss recovery
// recreates them so) is no sign of life, and when no lease has ever been renewed the answer is at once.
// Otherwise a renewal within LivenessWindowBeats heartbeats by this node's clock counts; when every
// renewal looks older than that, the clocks are not trusted (renewTime is the renewing node's clock,
// which may lag this one's): the leases are read again after two heartbeats, and a member whose renewal
// changed in between lives. Any error other than a missing lease is returned: the caller cannot tell.
func (p PeerLiveness) LivePeers(ctx context.Context, names []string) ([]string, error) {
	first, err := p.renewals(ctx, names)
	if err != nil || len(first) == 0 {
		return nil, err
	}
	now := time.Now
	if p.Now != nil {
		now = p.Now
	}
	var live []string
	for _, name := range names {
		if renewed, ok := first[name]; ok && now().Sub(renewed) < LivenessWindowBeats*p.Heartbeat {
			live = append(live, name)
		}
	}
	if len(live) > 0 {
		return live, nil
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(2*p.Heartbeat + time.Second):
	}
	second, err := p.renewals(ctx, names)
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		if renewed, ok := second[name]; ok && !renewed.Equal(first[name]) {
			live = append(live, name)
		}
	}
	return live, nil
}

// Renewed returns the members among names whose leases were renewed at least once, however long ago: their
// etcd ran, so their pods had an address. A lease that does not exist, was never renewed, or was reset
// empty tells nothing of the sort.
func (p PeerLiveness) Renewed(ctx context.Context, names []string) ([]string, error) {
	renewals, err := p.renewals(ctx, names)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, name := range names {
		if _, ok := renewals[name]; ok {
			out = append(out, name)
		}
	}
	return out, nil
}

// renewals are the renew times of the leases among names that have a holder.
func (p PeerLiveness) renewals(ctx context.Context, names []string) (map[string]time.Time, error) {
	out := map[string]time.Time{}
	err := visitLeases(ctx, p.Kubernetes, p.Namespace, names, func(lease *coordinationv1.Lease) bool {
		if holder, renewed := lease.Spec.HolderIdentity, lease.Spec.RenewTime; holder != nil && *holder != "" && renewed != nil {
			out[lease.Name] = renewed.Time
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
