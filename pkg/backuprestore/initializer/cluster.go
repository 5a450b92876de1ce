package initializer

import (
	"context"
	"crypto/tls"
	"slices"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/memberconfig"
)

// ClusterFacts describe the running cluster as the other members see it.
type ClusterFacts struct {
	// Reachable is set when at least one other member answered a status request.
	Reachable bool
	// Quorate is set when a linearizable member list succeeded (it needs a leader with quorum).
	Quorate bool
	// ClusterID of the answering members.
	ClusterID uint64
	// MaxRevision is the highest revision an answering member reported (0 when none answered).
	MaxRevision int64
	// Members are the cluster's members (quorate clusters only).
	Members []Member
	// Self is this member in Members, matched by name or, for members that never started, by peer URL.
	Self *Member
	// LivePeers are the other members with evidence of a serving etcd that this member may not be able to
	// reach (their sidecars renewed their member leases moments ago; Options.LivePeers). Observed only
	// when nobody answers and nothing else stands between this member and starting etcd on its own (a
	// fresh bootstrap, cases 1 and 2, or a restore as a cluster of its own, case 7).
	LivePeers []string
}

// Member is a cluster member as MemberList reports it.
type Member struct {
	ID        uint64
	Name      string
	PeerURLs  []string
	IsLearner bool
	// Started is set once the member has published its name, i.e. it ran at least once.
	Started bool
}

func (c ClusterFacts) hasMemberID(id uint64) bool {
	return slices.ContainsFunc(c.Members, func(m Member) bool { return m.ID == id })
}

// clusterMembers converts for memberconfig's initial-cluster of a joining member.
func clusterMembers(ms []Member) []memberconfig.ClusterMember {
	out := make([]memberconfig.ClusterMember, 0, len(ms))
	for _, m := range ms {
		out = append(out, memberconfig.ClusterMember{Name: m.Name, PeerURLs: m.PeerURLs})
	}
	return out
}

// prober asks the other members about the cluster, each request bounded by timeout: an unreachable
// member must not stall the initialization of a member that could start.
type prober struct {
	endpoints []string
	tls       *tls.Config
	timeout   time.Duration
}

// client opens a client balancing over the endpoints; it does not block on dialing.
func (p prober) client() (*clientv3.Client, error) {
	return clientv3.New(clientv3.Config{
		Endpoints: p.endpoints, DialTimeout: p.timeout, TLS: p.tls, Logger: zap.NewNop(),
	})
}

// probe gathers ClusterFacts for the member self (name and peer URLs). It asks every endpoint for its
// status and the cluster for a linearizable member list at the same time. A member list means a quorate
// cluster, and the quorate rows of the table need nothing the status answers add (the member list names
// the cluster, and an answer was received), so the probe returns with it and does not wait for members that
// do not answer: a scale-up's other new members, whose names may not resolve yet, would each hold it for
// the whole timeout. Without a member list the status answers decide, as they need all: whether anybody is
// reachable, and the highest revision anybody holds.
func (p prober) probe(ctx context.Context, self memberconfig.Member) ClusterFacts {
	var f ClusterFacts
	if len(p.endpoints) == 0 {
		return f
	}
	cli, err := p.client()
	if err != nil {
		return f
	}
	defer cli.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex
	var statuses sync.WaitGroup
	for _, ep := range p.endpoints {
		statuses.Go(func() {
			sctx, cancel := context.WithTimeout(ctx, p.timeout)
			defer cancel()
			st, err := cli.Status(sctx, ep)
			if err != nil {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			f.Reachable = true
			f.ClusterID = st.Header.GetClusterId()
			f.MaxRevision = max(f.MaxRevision, st.Header.GetRevision())
		})
	}
	lctx, lcancel := context.WithTimeout(ctx, p.timeout)
	defer lcancel()
	resp, err := cli.MemberList(lctx)
	if err != nil {
		statuses.Wait()
		return f
	}
	cancel() // the member list answered every question the status answers would
	statuses.Wait()
	f.Reachable, f.Quorate, f.ClusterID = true, true, resp.Header.GetClusterId()
	f.MaxRevision = max(f.MaxRevision, resp.Header.GetRevision())
	for _, m := range resp.Members {
		f.Members = append(f.Members, Member{
			ID: m.GetID(), Name: m.GetName(), PeerURLs: m.GetPeerURLs(), IsLearner: m.GetIsLearner(),
			Started: m.GetName() != "",
		})
	}
	f.Self = findSelf(f.Members, self)
	return f
}

// findSelf finds self by name, else an unstarted member by peer URLs.
func findSelf(ms []Member, self memberconfig.Member) *Member {
	for i := range ms {
		if ms[i].Name == self.Name {
			return &ms[i]
		}
	}
	for i := range ms {
		if !ms[i].Started && memberconfig.SameURLs(ms[i].PeerURLs, self.PeerURLs) {
			return &ms[i]
		}
	}
	return nil
}
