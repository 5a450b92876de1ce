package wrapper

import (
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/coreos/go-semver/semver"
	. "github.com/onsi/gomega"
	"go.etcd.io/etcd/server/v3/embed"

	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

// versionServer answers GET /version as an etcd 3.5 peer on addr ("" for any free port) and counts the
// requests.
func versionServer(t *testing.T, addr string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var asked atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		asked.Add(1)
		_, _ = w.Write([]byte(`{"etcdserver":"3.5.21","etcdcluster":"3.5.0"}`))
	}))
	if addr != "" {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		_ = srv.Listener.Close()
		srv.Listener = l
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &asked
}

// A member with data asks only the members its data's membership knows for their versions, not every
// member of its initial cluster: a restarted member's initial cluster names a scale-up's new members too,
// whose pods do not exist yet, and asking for them makes the seed's DNS cache that their names do not
// exist. Here the data is member m0's of a two-member cluster {m0, m1}; the initial cluster adds m2. m1
// is asked (it runs an older etcd and is reported), m2 never.
func TestAMemberWithDataAsksOnlyTheMembersItsDataKnows(t *testing.T) {
	g := NewWithT(t)
	c := etcdserver.StartCluster(t, 2, nil)
	m0, m1 := c.Members[0], c.Members[1]
	c.Stop()
	_, m1Asked := versionServer(t, m1.Config.PeerURL.Host)
	m2, m2Asked := versionServer(t, "")

	cfg := embed.NewConfig()
	cfg.Name, cfg.Dir, cfg.ClusterState = "m0", m0.Config.DataDir, embed.ClusterStateFlagExisting
	cfg.InitialCluster = "m0=" + m0.Config.PeerURL.String() + ",m1=" + m1.Config.PeerURL.String() + ",m2=" + m2.URL

	g.Expect(membersBelow(t.Context(), cfg, semver.Version{Major: 3, Minor: 6})).To(ConsistOf("m1 (3.5.21)"))
	g.Expect(m1Asked.Load()).To(BeNumerically(">", 0))
	g.Expect(m2Asked.Load()).To(BeZero(), "the member the data does not know was asked")
}

// Without data the whole initial cluster is asked: nothing else tells who the member will talk to.
func TestAMemberWithoutDataAsksTheWholeInitialCluster(t *testing.T) {
	g := NewWithT(t)
	m1, _ := versionServer(t, "")
	m2, _ := versionServer(t, "")
	cfg := embed.NewConfig()
	cfg.Name, cfg.Dir = "m0", t.TempDir()
	cfg.InitialCluster = "m0=http://127.0.0.1:1,m1=" + m1.URL + ",m2=" + m2.URL

	g.Expect(membersBelow(t.Context(), cfg, semver.Version{Major: 3, Minor: 6})).To(ConsistOf("m1 (3.5.21)", "m2 (3.5.21)"))
}
