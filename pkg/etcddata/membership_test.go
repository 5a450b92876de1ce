package etcddata

import (
	"testing"

	. "github.com/onsi/gomega"

	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

// The peer URLs of every member the data directory's membership knows, a learner added while the member
// ran among them; members only named in an initial cluster elsewhere are not.
func TestKnownPeerURLsAreTheMembershipOfTheData(t *testing.T) {
	g := NewWithT(t)
	c := etcdserver.Start(t)
	m := c.Members[0]
	learner := etcdserver.FreeURL(t)
	_, err := c.Client(t).MemberAddAsLearner(t.Context(), []string{learner.String()})
	g.Expect(err).NotTo(HaveOccurred())
	c.Stop()

	urls, known, err := KnownPeerURLs(m.Config.DataDir)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(known).To(BeTrue())
	g.Expect(urls).To(ConsistOf(m.Config.PeerURL.String(), learner.String()))
}

// A directory without a database knows nothing, which is an error, not an empty membership.
func TestKnownPeerURLsOfNoData(t *testing.T) {
	_, known, err := KnownPeerURLs(t.TempDir())
	if err == nil || known {
		t.Fatalf("KnownPeerURLs of an empty directory = known %v, %v", known, err)
	}
}
