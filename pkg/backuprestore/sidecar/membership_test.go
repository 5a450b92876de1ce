package sidecar

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/member"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/memberconfig"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

// countingClient is a client of endpoint that counts the member lists it asks for.
func countingClient(t *testing.T, endpoint string, memberLists *atomic.Int32) *clientv3.Client {
	t.Helper()
	count := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if method == "/etcdserverpb.Cluster/MemberList" {
			memberLists.Add(1)
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 5 * time.Second, Logger: zap.NewNop(),
		DialOptions: []grpc.DialOption{grpc.WithChainUnaryInterceptor(count)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cli.Close() })
	return cli
}

// A learner refuses the member list as unavailable, which etcd's client retries until the lookup's time is
// up: the sidecar of a learner finds it through the others without asking it.
func TestLearnerIsLookedUpThroughTheOthersOnly(t *testing.T) {
	g := NewWithT(t)
	c := etcdserver.Start(t)
	clusterCli := c.Client(t)
	learner := etcdserver.StartLearner(t, clusterCli, "m1")
	var asked atomic.Int32
	local, err := lookupLocalMember(t.Context(), countingClient(t, learner.Endpoint(), &asked), clusterCli, learner.Endpoint())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(local.Member.IsLearner).To(BeTrue())
	g.Expect(local.Member.PeerURLs).To(Equal([]string{learner.Config.PeerURL.String()}))
	g.Expect(local.ClusterSize).To(Equal(2))
	g.Expect(asked.Load()).To(BeZero(), "the learner was asked for the member list")
}

// After the initialization of a joining member the loop promotes it once it caught up and writes the
// result into the member lease right away (report), not at the heartbeat's next beat.
func TestMembershipLoopReportsThePromotedLearnerRightAway(t *testing.T) {
	g := NewWithT(t)
	c := etcdserver.Start(t)
	clusterCli := c.Client(t)
	learner := etcdserver.StartLearner(t, clusterCli, "m1")
	peer := learner.Config.PeerURL.String()
	served := newServedConfig("", "m1")
	cfg, err := memberconfig.Resolve(memberconfig.Template{
		etcdpod.KeyInitialAdvertisePeerURLs: peer, etcdpod.KeyAdvertiseClientURLs: learner.Endpoint(),
		etcdpod.KeyListenPeerURLs: peer, etcdpod.KeyListenClientURLs: learner.Endpoint(),
		etcdpod.KeyInitialCluster: fmt.Sprintf("m0=%s,m1=%s", c.Members[0].Config.PeerURL.String(), peer),
	}, "m1", nil)
	g.Expect(err).NotTo(HaveOccurred())
	served.prepared = cfg
	served.signal()

	cli := learner.Client(t)
	reported := make(chan *member.Local, 1)
	report := func(ctx context.Context) error {
		local, err := member.LocalMember(ctx, cli, learner.Endpoint())
		if err != nil {
			return err
		}
		reported <- local
		return nil
	}
	sw := &member.PeerURLSwitch{Client: cli, LocalEndpoint: learner.Endpoint(), Log: testr.New(t)}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		membershipLoop(ctx, served, cli, clusterCli, learner.Endpoint(), sw, member.NewMetrics(prometheus.NewRegistry()), report, 100*time.Millisecond, testr.New(t))
	}()
	defer func() { cancel(); <-done }()

	var local *member.Local
	g.Eventually(reported, time.Minute).Should(Receive(&local))
	g.Expect(local.Member.IsLearner).To(BeFalse(), "reported once promoted")
	g.Expect(local.ClusterSize).To(Equal(2))
}

// A learner's etcd answers its clients only once it published itself to the cluster, which etcd may retry
// only after its request timeout (7 s), while the learner caught up long before. The sidecar promotes it
// through the others as soon as etcd accepts, without waiting for its own member to answer: here the
// local client never reaches it.
func TestJoiningLearnerIsPromotedBeforeItAnswersItsClients(t *testing.T) {
	g := NewWithT(t)
	c := etcdserver.Start(t)
	clusterCli := c.Client(t)
	learner := etcdserver.StartLearner(t, clusterCli, "m1")
	peer := learner.Config.PeerURL.String()
	served := newServedConfig("", "m1")
	cfg, err := memberconfig.Resolve(memberconfig.Template{
		etcdpod.KeyInitialAdvertisePeerURLs: peer, etcdpod.KeyAdvertiseClientURLs: learner.Endpoint(),
		etcdpod.KeyListenPeerURLs: peer, etcdpod.KeyListenClientURLs: learner.Endpoint(),
		etcdpod.KeyInitialCluster: fmt.Sprintf("m0=%s,m1=%s", c.Members[0].Config.PeerURL.String(), peer),
	}, "m1", []memberconfig.ClusterMember{{Name: "m0", PeerURLs: []string{c.Members[0].Config.PeerURL.String()}}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.Joining).To(BeTrue())
	served.prepared = cfg
	served.signal()

	unreachable := "http://" + etcdserver.FreeURL(t).Host // nothing listens: the local member does not answer
	cli := etcdserver.NewClient(t, unreachable)
	sw := &member.PeerURLSwitch{Client: cli, LocalEndpoint: unreachable, Log: testr.New(t)}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		membershipLoop(ctx, served, cli, clusterCli, unreachable, sw, member.NewMetrics(prometheus.NewRegistry()), nil, 100*time.Millisecond, testr.New(t))
	}()
	defer func() { cancel(); <-done }()

	g.Eventually(func(g Gomega) {
		list, err := clusterCli.MemberList(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(list.Members).To(HaveLen(2))
		for _, m := range list.Members {
			g.Expect(m.IsLearner).To(BeFalse(), "member %x is still a learner", m.ID)
		}
	}, time.Minute, 100*time.Millisecond).Should(Succeed())
}
