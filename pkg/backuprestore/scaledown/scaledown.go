// Package scaledown removes etcd members beyond the cluster size of the configuration (a scale-in): druid
// renders the configuration for d members but keeps the StatefulSet at n replicas until the members with
// ordinals d..n-1 have left the membership, so they are removed while their pods still run and quorum
// holds throughout (removing one of n healthy members leaves a quorum of the rest). Members whose pods
// are already gone (an older druid scaled the StatefulSet first) are removed the same way. Only the
// backup leader runs it (upstream etcd-druid's multi-node proposal DEP-01, "Work-flows only on the leading member").
//
// Safety rules, re-checked before every single removal:
//   - a member is superfluous only if its name ends in an ordinal (<etcd>-<i>, <prefix>-<etcd>-<i>)
//     that is ≥ the cluster size of the configuration's initial-cluster, read anew for every run (the
//     kubelet refreshes the mounted configuration some time after druid changed it); a learner that never
//     started has no name yet and is judged by the first label of its peer URL's host, the pod name
//     (<etcd>-<i>.<etcd>-peer...): below the cluster size it is left to the member that added itself,
//     beyond it (a scale-up abandoned before the new member's etcd ran) it is removed, since it holds no
//     data and etcd admits one learner at a time, so an orphaned one would keep every later rejoin waiting;
//   - the local member and the last member are never removed: when the local member is the last
//     superfluous one, the raft leadership (and with it the backup leadership) is handed to a kept
//     healthy voting member, whose sidecar removes it;
//   - a removal or handover that would leave fewer healthy voting members than the quorum of the
//     remaining membership is not done (etcd's strict reconfiguration check is a second guard).
//
// After the removals, the leader marks the lease of every member beyond the cluster size that is not in
// the membership (MemberLeases): that mark is what lets druid shrink the StatefulSet.
package scaledown

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/initializer"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/member"
)

// DefaultPeriod is how often the leader looks for superfluous members. A scale-in waits for it (druid
// holds the StatefulSet until the members left), but only once: a run removes every member it may, and a
// new leader's term starts with a run. It is not shorter because a leader whose mounted template still
// shows the smaller size of before a scale-up would remove the new members as superfluous; the template's
// refresh (or the ConfigMap checksum's roll of the leader's pod) usually comes first.
const DefaultPeriod = time.Minute

// Options configure the cleanup.
type Options struct {
	// Client reaches the cluster through the local member (a handover must be sent to the leader, which
	// the backup leader's member is).
	Client *clientv3.Client
	// ClusterSize reads the number of members in the configuration's initial-cluster; it is called for
	// every run.
	ClusterSize func() (int, error)
	// Leases marks the member leases; nil marks nothing (tests of the removal rules).
	Leases MemberLeases
	// LocalMemberID is this sidecar's etcd member.
	LocalMemberID uint64
	// Timeout bounds each request; 0 means 5s.
	Timeout time.Duration
	// Metrics time the removals (etcdbr_member_remove_duration_seconds); nil records nothing.
	Metrics *member.Metrics
	Log     logr.Logger
}

// Removal is a member that was removed.
type Removal struct {
	ID   uint64
	Name string
}

// Cleanup removes every superfluous member that may be removed safely, highest ordinal first, hands the
// leadership over when the local member is the last superfluous one, marks the leases of the members that
// left, and returns what it removed. A member it may not remove (quorum) stops the run with a log line;
// the next run tries again.
func Cleanup(ctx context.Context, opts Options) ([]Removal, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = 5 * time.Second
	}
	size, err := opts.ClusterSize()
	if err != nil {
		return nil, fmt.Errorf("reading the cluster size: %w", err)
	}
	if size < 1 {
		return nil, fmt.Errorf("cluster size %d: the configuration's initial-cluster is empty", size)
	}
	log := opts.Log.WithName("scaledown")
	var removed []Removal
	for {
		members, err := list(ctx, opts)
		if err != nil {
			return removed, err
		}
		victim := pick(members, size, opts.LocalMemberID)
		if victim == nil {
			if err := handOverIfSuperfluous(ctx, opts, members, size); err != nil {
				return removed, err
			}
			return removed, markLeases(ctx, opts, members, size)
		}
		if ok, why := safeToRemove(ctx, opts, members, victim); !ok {
			log.Info("Not removing a superfluous member now", "member", memberName(victim), "reason", why)
			return removed, markLeases(ctx, opts, members, size)
		}
		rctx, cancel := context.WithTimeout(ctx, opts.Timeout)
		start := time.Now()
		_, err = opts.Client.MemberRemove(rctx, victim.GetID())
		opts.Metrics.ObserveRemoval(time.Since(start), err)
		cancel()
		if errors.Is(err, rpctypes.ErrUnhealthy) || errors.Is(err, rpctypes.ErrGRPCUnhealthy) {
			// etcd's own guard: members connected too recently; the next run tries again.
			log.Info("etcd refused the removal for now", "member", memberName(victim), "reason", err.Error())
			return removed, markLeases(ctx, opts, members, size)
		}
		if err != nil {
			return removed, fmt.Errorf("removing member %s: %w", memberName(victim), err)
		}
		log.Info("Removed a member beyond the cluster size", "member", memberName(victim), "learner", victim.GetIsLearner(), "clusterSize", size)
		removed = append(removed, Removal{ID: victim.GetID(), Name: memberName(victim)})
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

// pick returns the superfluous member with the highest ordinal other than the local one, or nil. Only
// members of the local member's Etcd (named like it, <base>-<ordinal>) are candidates: the members of an
// existing cluster the Etcd joined (spec.etcd.bootstrapWithExistingCluster) are another Etcd's, whatever
// ordinal their names end in.
func pick(members []*etcdserverpb.Member, size int, localID uint64) *etcdserverpb.Member {
	base, ok := leaseBase(members, localID)
	if len(members) <= 1 || !ok {
		return nil
	}
	var victim *etcdserverpb.Member
	best := -1
	for _, m := range members {
		ord, own := ownOrdinal(memberName(m), base)
		if !own || m.GetID() == localID || ord < size || ord <= best {
			continue
		}
		victim, best = m, ord
	}
	return victim
}

// memberName is the member's etcd name, or for a learner that never started (etcd lists it without a
// name) the first label of its peer URL's host, which for a member of a StatefulSet is its pod name.
func memberName(m *etcdserverpb.Member) string {
	if m.GetName() != "" || !m.GetIsLearner() || len(m.GetPeerURLs()) == 0 {
		return m.GetName()
	}
	return podOfPeerURL(m.GetPeerURLs()[0])
}

// podOfPeerURL is the first label of a peer URL's host: the pod name of a StatefulSet member
// (<pod>.<etcd>-peer.<namespace>.svc), or "" for a URL that does not parse.
func podOfPeerURL(peerURL string) string {
	u, err := url.Parse(peerURL)
	if err != nil {
		return ""
	}
	label, _, _ := strings.Cut(u.Hostname(), ".")
	return label
}

// ownOrdinal is the ordinal of a member of the Etcd whose members are named <base>-<ordinal>; own is false
// for every other name (an unnamed learner, a member of another cluster).
func ownOrdinal(name, base string) (ordinal int, own bool) {
	rest, ok := strings.CutPrefix(name, base+"-")
	if !ok || rest == "" || strings.Trim(rest, "0123456789") != "" {
		return -1, false
	}
	return initializer.Ordinal(name), true
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
