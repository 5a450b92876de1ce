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

// The sidecar's client was created when the pod started, and its etcd may come up only much later (a
// restore, a learner that waited for its turn). gRPC backs off between connection attempts up to two
// minutes, so after a while of failed attempts it would try again only many seconds after etcd is up.
// The membership loop asks at its own pace instead: here etcd is down long enough for gRPC's backoff to
// exceed the time the lookup is given once etcd is back.
func TestLocalMemberIsFoundRightAfterALongOutage(t *testing.T) {
	g := NewWithT(t)
	m := etcdserver.Start(t).Members[0]
	cli := m.Client(t)
	m.Stop()
	// Failed attempts for a while: gRPC's default backoff grows 1 s, 1.6 s, 2.6 s, 4.1 s, 6.6 s, 10.5 s.
	outage, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	for outage.Err() == nil {
		_, _ = cli.Status(outage, m.Endpoint())
	}
	back := etcdserver.StartMember(t, m.Config)

	ctx, cancelLookup := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancelLookup()
	local, err := waitForLocalMember(ctx, cli, nil, back.Endpoint(), 100*time.Millisecond, testr.New(t))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(local.Member.Name).To(Equal(m.Config.Name))
}
