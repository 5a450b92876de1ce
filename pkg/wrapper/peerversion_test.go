package wrapper

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/coreos/go-semver/semver"
	. "github.com/onsi/gomega"
	"go.etcd.io/etcd/server/v3/embed"

	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
	"github.com/gardener-etcd/gardener-etcd/test/support/testpki"
)

// The other members are asked for their versions at the same time: members that do not exist yet (a
// scale-up's new members, whose names do not resolve) cost one peer timeout together, not one each. Each
// peer here answers only once every peer has been asked, which a member asking one after the other never
// sees happen: it gets no answer within the timeout and counts no version.
func TestOtherMembersAreAskedForTheirVersionsTogether(t *testing.T) {
	g := NewWithT(t)
	const peers = 3
	var asked sync.WaitGroup
	asked.Add(peers)
	release := make(chan struct{})
	go func() { asked.Wait(); close(release) }()
	cluster := "self=http://127.0.0.1:1"
	for i := range peers {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			asked.Done()
			select {
			case <-release:
				_, _ = w.Write([]byte(`{"etcdserver":"3.5.21","etcdcluster":"3.5.0"}`))
			case <-r.Context().Done():
			}
		}))
		t.Cleanup(srv.Close)
		cluster += fmt.Sprintf(",peer-%d=%s", i, srv.URL)
	}
	cfg := embed.NewConfig()
	cfg.Name, cfg.InitialCluster = "self", cluster

	below := membersBelow(t.Context(), cfg, semver.Version{Major: 3, Minor: 6})
	g.Expect(below).To(ConsistOf("peer-0 (3.5.21)", "peer-1 (3.5.21)", "peer-2 (3.5.21)"))
}

// With peer TLS the other members are asked over TLS with the member's peer certificate, as etcd asks
// them. etcd's peer port offers HTTP/2 in the TLS handshake but answers HTTP/1.1, so a client that takes
// the offer gets no version: the versions must come over HTTP/1.1.
func TestOtherMembersAnswerOverPeerTLS(t *testing.T) {
	g := NewWithT(t)
	ca := testpki.NewCA(t)
	peer := etcdserver.FreeURL(t)
	peer.Scheme = "https"
	pair := ca.Issue(t, "peer")
	etcdserver.StartMember(t, etcdserver.MemberConfig{Name: "m0", PeerURL: peer, Configure: func(c *embed.Config) { c.PeerTLSInfo = ca.TLSInfo(pair) }})
	cfg := embed.NewConfig()
	cfg.Name, cfg.PeerTLSInfo = "joiner", ca.TLSInfo(ca.Issue(t, "joiner"))
	cfg.InitialCluster = fmt.Sprintf("m0=%s,joiner=https://127.0.0.1:1", peer.String())

	g.Expect(peerVersions(t.Context(), cfg)).To(HaveKey("m0"))
}
