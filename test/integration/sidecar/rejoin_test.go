package sidecar

import (
	"context"
	"os"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

// TestWipedMemberRejoinsAsLearnerAndIsPromoted loses the data volume of one member of a running
// 3-member Etcd: at the pod's restart the initializer removes the old member and adds it back as a
// learner, the sidecar serves etcd the running cluster's members with state `existing`, and once etcd
// runs the sidecar promotes the learner to a voting member that holds every key.
func TestWipedMemberRejoinsAsLearnerAndIsPromoted(t *testing.T) {
	g := NewWithT(t)
	c := newCluster(t, 3)
	cli := c.startAll()
	putRetrying(t, cli, "a/", 40)
	want, _ := allKeys(t, cli)
	before, err := cli.MemberList(t.Context())
	g.Expect(err).NotTo(HaveOccurred())

	wiped := c.pods[2]
	wiped.stop()
	g.Expect(os.RemoveAll(wiped.dataDir)).To(Succeed())
	wiped.start()
	g.Eventually(wiped.ready, 3*time.Minute, 200*time.Millisecond).Should(BeTrue())

	// The member is back under its name with a new ID, voting.
	g.Eventually(func(g Gomega) {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		list, err := cli.MemberList(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(list.Members).To(HaveLen(3))
		for _, m := range list.Members {
			g.Expect(m.IsLearner).To(BeFalse(), m.Name)
			g.Expect(m.Name).NotTo(BeEmpty())
		}
	}, 2*time.Minute, 500*time.Millisecond).Should(Succeed())
	after, err := cli.MemberList(t.Context())
	g.Expect(err).NotTo(HaveOccurred())
	idOf := func(members []*etcdserverpb.Member, name string) uint64 {
		for _, m := range members {
			if m.Name == name {
				return m.ID
			}
		}
		return 0
	}
	g.Expect(idOf(after.Members, wiped.name)).NotTo(Equal(idOf(before.Members, wiped.name)), "rejoined as a new member")

	// The rejoined member serves every key itself.
	local := etcdserver.NewClient(t, wiped.client.String())
	g.Eventually(func() map[string]kv {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		resp, err := local.Get(ctx, "", clientv3.WithPrefix(), clientv3.WithSerializable())
		if err != nil {
			return nil
		}
		out := map[string]kv{}
		for _, k := range resp.Kvs {
			out[string(k.Key)] = kv{Value: string(k.Value), CreateRevision: k.CreateRevision, ModRevision: k.ModRevision, Version: k.Version}
		}
		return out
	}, time.Minute, 200*time.Millisecond).Should(Equal(want))
}
