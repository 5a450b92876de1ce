package initializer

import (
	"context"
	"crypto/tls"
	"fmt"
	"slices"
	"strings"
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
	// Endpoints are the endpoints the facts were gathered through, which a rejoin goes through too: all of
	// the prober's, or with a required cluster ID (Options.OwnClusterID) those that answered with it.
	Endpoints []string
	// Foreign are the endpoints that answered with another cluster ID than the required one; they count
	// for nothing else.
	Foreign ForeignAnswers
}

// ForeignAnswers are endpoints and the cluster IDs they answered with.
type ForeignAnswers map[string]uint64

// String lists them sorted, as `<endpoint>=<cluster ID hex>`.
func (a ForeignAnswers) String() string {
	out := make([]string, 0, len(a))
	for ep, id := range a {
		out = append(out, fmt.Sprintf("%s=%x", ep, id))
	}
	slices.Sort(out)
	return strings.Join(out, ",")
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
// member must not stall the initialization of a member that could start. With a clusterID, only the
// endpoints that answer with it are asked further (Options.OwnClusterID).
type prober struct {
	endpoints []string
	tls       *tls.Config
	timeout   time.Duration
	clusterID uint64
}

// client opens a client balancing over the prober's endpoints; it does not block on dialing.
func (p prober) client() (*clientv3.Client, error) { return p.clientOf(p.endpoints) }

// clientOf opens a client balancing over endpoints; it does not block on dialing.
func (p prober) clientOf(endpoints []string) (*clientv3.Client, error) {
	return clientv3.New(clientv3.Config{
		Endpoints: endpoints, DialTimeout: p.timeout, TLS: p.tls, Logger: zap.NewNop(),
	})
}

// probe gathers ClusterFacts for the member self (name and peer URLs).
func (p prober) probe(ctx context.Context, self memberconfig.Member) ClusterFacts {
	f := ClusterFacts{Endpoints: p.endpoints}
	if len(p.endpoints) == 0 {
		return f
	}
	cli, err := p.client()
	if err != nil {
		return f
	}
	defer cli.Close()
	var mu sync.Mutex
	var wg sync.WaitGroup
	var answered []string
	for _, ep := range p.endpoints {
		wg.Go(func() {
			sctx, cancel := context.WithTimeout(ctx, p.timeout)
			defer cancel()
			st, err := cli.Status(sctx, ep)
			if err != nil {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if id := st.Header.GetClusterId(); p.clusterID != 0 && id != p.clusterID {
				if f.Foreign == nil {
					f.Foreign = ForeignAnswers{}
				}
				f.Foreign[ep] = id
				return
			}
			answered = append(answered, ep)
			f.Reachable = true
			f.ClusterID = st.Header.GetClusterId()
			f.MaxRevision = max(f.MaxRevision, st.Header.GetRevision())
		})
	}
	wg.Wait()
	if !f.Reachable {
		return f
	}
	listCli := cli
	if p.clusterID != 0 {
		slices.Sort(answered)
		f.Endpoints = answered
		if listCli, err = p.clientOf(answered); err != nil {
			return ClusterFacts{Endpoints: answered, Foreign: f.Foreign}
		}
		defer listCli.Close()
	}
	lctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	resp, err := listCli.MemberList(lctx)
	if err != nil || (p.clusterID != 0 && resp.Header.GetClusterId() != p.clusterID) {
		return f
	}
	f.Quorate, f.ClusterID = true, resp.Header.GetClusterId()
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
