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
