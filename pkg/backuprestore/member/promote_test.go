package member_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	. "github.com/onsi/gomega"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/member"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/memberconfig"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

func TestLearnerIsPromotedOnceCaughtUp(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	c := etcdserver.StartCluster(t, 3, nil)
	cli := c.Client(t)
	for i := range 500 {
		_, err := cli.Put(ctx, fmt.Sprintf("k/%03d", i), "value")
		g.Expect(err).NotTo(HaveOccurred())
	}

	peerURL := etcdserver.FreeURL(t)
	// etcd refuses membership changes until the members have been connected for a few seconds
	// ("unhealthy cluster"): a fresh cluster has to settle first.
	var added *clientv3.MemberAddResponse
	g.Eventually(func() (err error) {
		added, err = cli.MemberAddAsLearner(ctx, []string{peerURL.String()})
		return err
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed())
	learnerID := added.Member.ID
	_, err := cli.MemberPromote(ctx, learnerID)
	g.Expect(errors.Is(err, rpctypes.ErrMemberLearnerNotReady)).To(BeTrue(), "a learner that never started is not in sync: %v", err)

	promoted := make(chan error, 1)
	go func() { promoted <- member.PromoteLearner(ctx, cli, learnerID, 200*time.Millisecond, testr.New(t)) }()

	// Start the learner as the sidecar would configure it: current members plus self, state existing.
	var current []memberconfig.ClusterMember
	for _, m := range added.Members {
		current = append(current, memberconfig.ClusterMember{Name: m.Name, PeerURLs: m.PeerURLs})
	}
	learner := etcdserver.StartMember(t, etcdserver.MemberConfig{
		Name: "m3", PeerURL: peerURL, ClusterState: memberconfig.ClusterStateExisting,
		InitialCluster: memberconfig.JoinCluster(current, "m3", []string{peerURL.String()}).String(),
	})

	g.Eventually(promoted, time.Minute).Should(Receive(BeNil()))
	list, err := cli.MemberList(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(list.Members).To(HaveLen(4))
	for _, m := range list.Members {
		g.Expect(m.IsLearner).To(BeFalse(), m.Name)
	}
	resp, err := learner.Client(t).Get(ctx, "k/", clientv3.WithPrefix(), clientv3.WithSerializable(), clientv3.WithCountOnly())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(resp.Count).To(Equal(int64(500)), "the promoted member holds the data")

	g.Expect(member.PromoteLearner(ctx, cli, learnerID, time.Second, testr.New(t))).To(Succeed(), "already a voting member")
	g.Expect(member.PromoteLearner(ctx, cli, 0xdead, time.Second, testr.New(t))).To(MatchError(ContainSubstring("member not found")))
}
