package httpapi

import (
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	"go.etcd.io/etcd/api/v3/etcdserverpb"

	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

func TestEtcdLeaderIsTheBackupLeader(t *testing.T) {
	g := NewWithT(t)
	c := etcdserver.StartCluster(t, 3, nil)
	cli := c.Client(t)
	leader := c.Leader()
	g.Expect(leader).NotTo(BeNil())
	byName := func(m *etcdserverpb.Member) (string, error) { return "http://sidecar-of-" + m.Name, nil }
	for _, m := range c.Members {
		r := &EtcdLeaderResolver{Client: cli, LocalEndpoint: m.Endpoint(), SidecarURL: byName}
		got, err := r.BackupLeader(t.Context())
		g.Expect(err).NotTo(HaveOccurred())
		if m == leader {
			g.Expect(got).To(Equal(Leader{Self: true}), m.Config.Name)
		} else {
			g.Expect(got).To(Equal(Leader{URL: "http://sidecar-of-" + leader.Config.Name}), m.Config.Name)
		}
	}

	def := &EtcdLeaderResolver{Client: cli, LocalEndpoint: otherThan(c, leader).Endpoint()}
	got, err := def.BackupLeader(t.Context())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got.URL).To(Equal(fmt.Sprintf("http://127.0.0.1:%d", 8080)), "same host as the leader's client URL, sidecar port")
}

func otherThan(c *etcdserver.Cluster, m *etcdserver.Member) *etcdserver.Member {
	for _, o := range c.Members {
		if o != m {
			return o
		}
	}
	return nil
}
