package initializer

import (
	"context"
	"crypto/tls"
	"net"
	"net/url"
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
	// Endpoints are the endpoints the facts were gathered through, which a rejoin goes through too: all of
	// the prober's, or for an Etcd that names an existing cluster those that answered with its own cluster
	// ID (OwnCluster).
	Endpoints []string
	// OwnCluster is the cluster an Etcd that names an existing cluster runs, as far as known (nil for
	// other Etcds); Foreign are the endpoints that answered with another cluster ID: they count for nothing
	// else.
	OwnCluster *ownCluster
	Foreign    ForeignAnswers
}

// Member is a cluster member as MemberList reports it.
type Member struct {
	ID       uint64
	Name     string
	PeerURLs []string
	// ClientURLs are the client URLs the member advertises (none before it started).
	ClientURLs []string
	IsLearner  bool
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
// member must not stall the initialization of a member that could start. With own set (an Etcd that names
// an existing cluster), only the endpoints that answer with the Etcd's own cluster ID are asked further.
type prober struct {
	endpoints []string
	// service are the client Service's URLs, asked first (probeThroughService).
	service []string
	tls     *tls.Config
	timeout time.Duration
	own     *ownCluster
}

// clientOf opens a client balancing over endpoints; it does not block on dialing.
func (p prober) clientOf(endpoints []string) (*clientv3.Client, error) {
	return clientv3.New(clientv3.Config{
		Endpoints: endpoints, DialTimeout: p.timeout, TLS: p.tls, Logger: zap.NewNop(),
	})
}

// probe gathers ClusterFacts for the member self (name and peer URLs). For an Etcd that names an existing
// cluster it asks for the member list only through the endpoints of its own cluster (probeOwnCluster);
// otherwise it asks the client Service first (probeThroughService) and, when no member with a leader
// answers there, every endpoint for its status and the cluster for a linearizable member list at the
// same time. A member list means a quorate cluster, and the quorate rows of the table need nothing the
// status answers add (the member list names the cluster, and an answer was received), so the probe returns
// with it and does not wait for members that do not answer: a scale-up's other new members, whose names
// may not resolve yet, would each hold it for the whole timeout. Without a member list the status answers
// decide, as they need all: whether anybody is reachable, and the highest revision anybody holds. data is
// what the member's own data directory holds.
func (p prober) probe(ctx context.Context, self memberconfig.Member, data DataFacts) ClusterFacts {
	f := ClusterFacts{Endpoints: p.endpoints}
	if len(p.endpoints) == 0 {
		return f
	}
	if p.own == nil {
		if f, ok := p.probeThroughService(ctx, self); ok {
			return f
		}
	}
	cli, err := p.clientOf(p.endpoints)
	if err != nil {
		return f
	}
	defer cli.Close()
	if p.own != nil {
		return p.probeOwnCluster(ctx, cli, self, localClusterID(data))
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	answered := make(chan map[string]status, 1)
	go func() { answered <- p.statuses(ctx, cli) }()
	lctx, lcancel := context.WithTimeout(ctx, p.timeout)
	defer lcancel()
	resp, err := cli.MemberList(lctx)
	if err == nil {
		cancel() // the member list answered every question the status answers would
	}
	f = withStatuses(f, <-answered, p.endpoints)
	if err != nil {
		return f
	}
	f.Reachable = true
	f.MaxRevision = max(f.MaxRevision, resp.Header.GetRevision())
	return withMemberList(f, resp, self)
}

// probeThroughService asks the client Service for the cluster's member list; ok is false when no member
// behind it has a leader. The Service leads to Ready members only and its name always resolves, so a member
// that joins a running cluster (a new member of a scale-up above all) learns all that the quorate rows of
// the decision need without asking any member by name. The other new members of a scale-up start at the
// same moment, and their pods may not have an address yet: asking for their names then makes the seed's DNS
// answer that they do not exist and cache that answer (up to its TTL, 30 s on Gardener's seeds), which it
// keeps giving to the leader's etcd after those pods started, so that nobody reaches them meanwhile.
// A TCP connection first shows whether any member is behind the Service at all (a Service without
// endpoints refuses it at once), and a status whether that member sees a leader: without one (a
// bootstrap, a lost quorum) the probe goes on to every member at once, without waiting for a member list
// that cannot come.
func (p prober) probeThroughService(ctx context.Context, self memberconfig.Member) (ClusterFacts, bool) {
	var behind []string
	for _, ep := range p.service {
		if p.accepts(ctx, ep) {
			behind = append(behind, ep)
		}
	}
	if len(behind) == 0 {
		return ClusterFacts{}, false
	}
	cli, err := p.clientOf(behind)
	if err != nil {
		return ClusterFacts{}, false
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	st, err := cli.Status(ctx, behind[0])
	if err != nil || st.Leader == 0 {
		return ClusterFacts{}, false
	}
	resp, err := cli.MemberList(ctx)
	if err != nil || resp.Header.GetClusterId() != st.Header.GetClusterId() {
		return ClusterFacts{}, false
	}
	f := ClusterFacts{Reachable: true, MaxRevision: max(st.Header.GetRevision(), resp.Header.GetRevision())}
	f = withMemberList(f, resp, self)
	f.Endpoints = slices.Concat(behind, startedMembersClientURLs(f.Members, self))
	return f, true
}

// startedMembersClientURLs are the client URLs the started members (those that published their names, so
// their pods had addresses) other than self advertise. A join goes through them besides the Service: one
// connection through the Service sticks to one member, which may be a learner that refuses membership
// requests, or on its way out.
func startedMembersClientURLs(members []Member, self memberconfig.Member) []string {
	var out []string
	for _, m := range members {
		if m.Started && m.Name != self.Name {
			out = append(out, m.ClientURLs...)
		}
	}
	return out
}

// accepts tells whether a TCP connection to endpoint's host and port succeeds within the timeout.
func (p prober) accepts(ctx context.Context, endpoint string) bool {
	u, err := url.Parse(endpoint)
	if err != nil {
		return false
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	d := net.Dialer{Timeout: p.timeout}
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(u.Hostname(), port))
	if err != nil {
		return false
	}
	_ = conn.Close()
	return true
}

// probeOwnCluster is probe for an Etcd that names an existing cluster: every endpoint's status first, so
// that endpoints answering for another cluster (the source's endpoints serving a foreign cluster) are
// left out of the member list and of everything that follows.
// localID is the cluster ID of this Etcd's valid data in the member's data directory (0: none).
func (p prober) probeOwnCluster(ctx context.Context, cli *clientv3.Client, self memberconfig.Member, localID uint64) ClusterFacts {
	answers := p.statuses(ctx, cli)
	want := ownClusterOf(answers, *p.own, localID)
	accepted, foreign := want.split(answers)
	f := withStatuses(ClusterFacts{Endpoints: accepted, OwnCluster: &want, Foreign: foreign}, answers, accepted)
	if !f.Reachable {
		return f
	}
	listCli, err := p.clientOf(accepted)
	if err != nil {
		return f
	}
	defer listCli.Close()
	lctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	resp, err := listCli.MemberList(lctx)
	if err != nil || !want.accepts(resp.Header.GetClusterId()) {
		return f
	}
	return withMemberList(f, resp, self)
}

// withStatuses records the status answers of endpoints: anybody reachable, the cluster they name and the
// highest revision.
func withStatuses(f ClusterFacts, answers map[string]status, endpoints []string) ClusterFacts {
	for _, ep := range endpoints {
		if st, ok := answers[ep]; ok {
			f.Reachable = true
			f.ClusterID = st.clusterID
			f.MaxRevision = max(f.MaxRevision, st.revision)
		}
	}
	return f
}

// withMemberList records a member list's answer: the cluster is quorate, and who its members are.
func withMemberList(f ClusterFacts, resp *clientv3.MemberListResponse, self memberconfig.Member) ClusterFacts {
	f.Quorate, f.ClusterID = true, resp.Header.GetClusterId()
	for _, m := range resp.Members {
		f.Members = append(f.Members, Member{
			ID: m.GetID(), Name: m.GetName(), PeerURLs: m.GetPeerURLs(), ClientURLs: m.GetClientURLs(), IsLearner: m.GetIsLearner(),
			Started: m.GetName() != "",
		})
	}
	f.Self = findSelf(f.Members, self)
	return f
}

// localClusterID is the cluster ID of valid data of this Etcd in the data directory (0: none).
func localClusterID(d DataFacts) uint64 {
	if !d.MetadataValid || !d.OwnerOK {
		return 0
	}
	return d.ClusterID
}

// status is what an endpoint answered a status request with.
type status struct {
	clusterID uint64
	revision  int64
}

// statuses asks every endpoint for its status at once; those that do not answer (or not before ctx ends)
// are left out.
func (p prober) statuses(ctx context.Context, cli *clientv3.Client) map[string]status {
	var mu sync.Mutex
	var wg sync.WaitGroup
	out := map[string]status{}
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
			out[ep] = status{clusterID: st.Header.GetClusterId(), revision: st.Header.GetRevision()}
		})
	}
	wg.Wait()
	return out
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
