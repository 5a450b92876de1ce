package member_test

import (
	"context"
	"fmt"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	. "github.com/onsi/gomega"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/heartbeat"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/member"
	"github.com/gardener-etcd/gardener-etcd/test/support/envtest"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
	"github.com/gardener-etcd/gardener-etcd/test/support/testpki"
)

var env *envtest.Env

func TestMain(m *testing.M) { envtest.Main(m, &env) }

// embeddedRestarter restarts one embedded member the way the wrapper restarts the etcd container: stop
// the server, start it again from the same data dir with the configuration of the pod, which now listens
// on https peer URLs.
type embeddedRestarter struct {
	t        *testing.T
	member   *etcdserver.Member
	peerURL  url.URL
	tls      func(*embed.Config)
	restarts atomic.Int32
}

func (r *embeddedRestarter) RestartEtcd(context.Context) error {
	r.restarts.Add(1)
	old := r.member
	old.Stop()
	r.member = etcdserver.StartMember(r.t, etcdserver.MemberConfig{
		Name: old.Config.Name, DataDir: old.Config.DataDir, ClientURL: old.Config.ClientURL, PeerURL: r.peerURL,
		InitialCluster: old.Config.InitialCluster, Configure: r.tls,
	})
	return nil
}

// writer keeps writing through the given members and counts failures, to show the cluster stays writable;
// it returns once the first write is acknowledged.
func writer(t *testing.T, endpoints []string) (stop func() (ok, failed int)) {
	cli := etcdserver.NewClient(t, endpoints...)
	ctx, cancel := context.WithCancel(t.Context())
	var okN, failedN int
	var wg sync.WaitGroup
	firstAcked := make(chan struct{})
	wg.Go(func() {
		for i := 0; ctx.Err() == nil; i++ {
			putCtx, putCancel := context.WithTimeout(ctx, 5*time.Second)
			_, err := cli.Put(putCtx, fmt.Sprintf("load/%d", i), "v")
			putCancel()
			switch {
			case err == nil:
				okN++
				if okN == 1 {
					close(firstAcked)
				}
			case ctx.Err() == nil:
				failedN++
				t.Logf("write %d failed: %v", i, err)
			}
			time.Sleep(10 * time.Millisecond) // pacing only; nothing waits on it
		}
	})
	stop = func() (int, int) { cancel(); wg.Wait(); return okN, failedN }
	// The writer runs before the caller's action does: a switch that takes less time than the writer's
	// first write would otherwise be judged on no write at all.
	select {
	case <-firstAcked:
	case <-time.After(30 * time.Second):
		stop()
		t.Fatal("the writer's first write was not acknowledged within 30 s")
	}
	return stop
}

func TestPeerURLSwitchToHTTPSFlipsTheLeaseAnnotation(t *testing.T) {
	g := NewWithT(t)
	cs := kubernetes.NewForConfigOrDie(env.Config)
	ns := env.CreateNamespace(t)
	ca := testpki.NewCA(t)
	pair := ca.Issue(t, "peer")
	// Every member can dial https peers (peer TLS configured) but all start on http peer URLs, like a
	// cluster whose pods already mount the peer certificates.
	withPeerTLS := func(c *embed.Config) { c.PeerTLSInfo = ca.TLSInfo(pair) }
	c := etcdserver.StartCluster(t, 3, withPeerTLS)

	var switching *etcdserver.Member
	var others []string
	for _, m := range c.Members {
		if switching == nil && m != c.Leader() {
			switching = m
			continue
		}
		others = append(others, m.Endpoint())
	}
	leases := map[string]*heartbeat.MemberLease{}
	for _, m := range c.Members {
		_, err := cs.CoordinationV1().Leases(ns).Create(t.Context(), &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: m.Config.Name}}, metav1.CreateOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		leases[m.Config.Name] = &heartbeat.MemberLease{Kubernetes: cs, Namespace: ns, Name: m.Config.Name,
			Etcd: m.Client(t), LocalEndpoint: m.Endpoint(), Log: testr.New(t)}
	}
	annotation := func(name string) string {
		g.Expect(leases[name].Renew(t.Context())).To(Succeed())
		l, err := cs.CoordinationV1().Leases(ns).Get(t.Context(), name, metav1.GetOptions{})
		g.Expect(err).NotTo(HaveOccurred())
		return l.Annotations[heartbeat.AnnotationTLSEnabled]
	}
	g.Expect(annotation(switching.Config.Name)).To(Equal("false"))

	httpsPeer := switching.Config.PeerURL
	httpsPeer.Scheme = "https"
	restarter := &embeddedRestarter{t: t, member: switching, peerURL: httpsPeer, tls: withPeerTLS}
	sidecarClient := switching.Client(t) // the sidecar talks to its own member only (--endpoints=<n>-local)
	sw := &member.PeerURLSwitch{Client: sidecarClient, LocalEndpoint: switching.Endpoint(), Restarter: restarter, PollInterval: 100 * time.Millisecond, Log: testr.New(t)}

	stopWriter := writer(t, others)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	switched, err := sw.Ensure(ctx, []string{httpsPeer.String()}, []string{switching.Config.PeerURL.String()})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(switched).To(BeTrue())
	g.Expect(restarter.restarts.Load()).To(Equal(int32(1)))

	// The restarted member takes part in the cluster again: it sees writes made through the others.
	_, err = etcdserver.NewClient(t, others...).Put(ctx, "after-switch", "1")
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func() int {
		resp, err := sidecarClient.Get(ctx, "after-switch", clientv3.WithSerializable())
		if err != nil {
			return 0
		}
		return len(resp.Kvs)
	}, 30*time.Second, 100*time.Millisecond).Should(Equal(1))
	ok, failed := stopWriter()
	g.Expect(failed).To(BeZero(), "the cluster stays writable while one member switches")
	g.Expect(ok).To(BeNumerically(">", 0))

	g.Expect(annotation(switching.Config.Name)).To(Equal("true"))
	for _, m := range c.Members {
		if m != switching {
			g.Expect(annotation(m.Config.Name)).To(Equal("false"), m.Config.Name)
		}
	}
	local, err := member.LocalMember(ctx, sidecarClient, switching.Endpoint())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(local.Member.PeerURLs).To(Equal([]string{httpsPeer.String()}))

	switched, err = sw.Ensure(ctx, []string{httpsPeer.String()}, []string{httpsPeer.String()})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(switched).To(BeFalse(), "nothing to do once the cluster agrees")
	g.Expect(restarter.restarts.Load()).To(Equal(int32(1)), "no second restart")
}

// The first member of a 1 → 3 scale-up: its pod was replaced with the peer certificates mounted, so etcd
// already listens with TLS on its peer port, while the cluster still knows it by its http peer URL. The
// switch is then the membership update alone: etcd is not restarted, the single member keeps taking
// writes throughout, and a new member joins it over TLS.
func TestPeerURLSwitchOfAMemberListeningWithTLSRestartsNothing(t *testing.T) {
	g := NewWithT(t)
	ca := testpki.NewCA(t)
	pair := ca.Issue(t, "peer")
	withPeerTLS := func(c *embed.Config) { c.PeerTLSInfo = ca.TLSInfo(pair) }
	bootstrapped := etcdserver.StartCluster(t, 1, withPeerTLS).Members[0]
	httpsPeer := bootstrapped.Config.PeerURL
	httpsPeer.Scheme = "https"
	// The pod replacement: the same data directory, started by a configuration whose peer listener is https.
	bootstrapped.Stop()
	first := etcdserver.StartMember(t, etcdserver.MemberConfig{Name: bootstrapped.Config.Name, DataDir: bootstrapped.Config.DataDir,
		ClientURL: bootstrapped.Config.ClientURL, PeerURL: httpsPeer, InitialCluster: bootstrapped.Config.InitialCluster, Configure: withPeerTLS})
	cli := first.Client(t)
	restarter := &embeddedRestarter{t: t, member: first, peerURL: httpsPeer, tls: withPeerTLS}
	sw := &member.PeerURLSwitch{Client: cli, LocalEndpoint: first.Endpoint(), Restarter: restarter, PollInterval: 100 * time.Millisecond, Log: testr.New(t)}

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	stopWriter := writer(t, []string{first.Endpoint()})
	switched, err := sw.Ensure(ctx, []string{httpsPeer.String()}, []string{httpsPeer.String()})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(switched).To(BeTrue())
	ok, failed := stopWriter()
	g.Expect(restarter.restarts.Load()).To(BeZero(), "etcd already listens with TLS")
	g.Expect(failed).To(BeZero(), "the single member keeps taking writes")
	g.Expect(ok).To(BeNumerically(">", 0))
	local, err := member.LocalMember(ctx, cli, first.Endpoint())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(local.Member.PeerURLs).To(Equal([]string{httpsPeer.String()}))

	// A new member joins over TLS, as the scale-up's next members do, and is promoted.
	joinerPeer := etcdserver.FreeURL(t)
	joinerPeer.Scheme = "https"
	var added *clientv3.MemberAddResponse
	g.Eventually(func() error {
		added, err = cli.MemberAddAsLearner(ctx, []string{joinerPeer.String()})
		return err
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
	joiner := etcdserver.StartMember(t, etcdserver.MemberConfig{Name: "joiner", PeerURL: joinerPeer, ClusterState: "existing",
		InitialCluster: fmt.Sprintf("%s=%s,joiner=%s", first.Config.Name, httpsPeer.String(), joinerPeer.String()), Configure: withPeerTLS})
	g.Expect(member.PromoteLearner(ctx, cli, added.Member.ID, 100*time.Millisecond, testr.New(t))).To(Succeed())
	joinerCli := joiner.Client(t)
	g.Eventually(func() error { // the joiner learns of its promotion when it applies it
		_, err := joinerCli.Put(ctx, "after-join", "1")
		return err
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
	g.Eventually(func() int {
		resp, err := cli.Get(ctx, "after-join", clientv3.WithSerializable())
		if err != nil {
			return 0
		}
		return len(resp.Kvs)
	}, 30*time.Second, 100*time.Millisecond).Should(Equal(1))
	g.Expect(restarter.restarts.Load()).To(BeZero())
}

func TestListenersServeTheAdvertisedSchemeAndPort(t *testing.T) {
	g := NewWithT(t)
	advertised := []string{"https://etcd-main-0.etcd-main-peer.shoot.svc:2380"}
	g.Expect(member.ListenersServe([]string{"https://0.0.0.0:2380"}, advertised)).To(BeTrue())
	g.Expect(member.ListenersServe([]string{"http://0.0.0.0:2380"}, advertised)).To(BeFalse(), "a plain listener")
	g.Expect(member.ListenersServe([]string{"https://0.0.0.0:2381"}, advertised)).To(BeFalse(), "another port")
	g.Expect(member.ListenersServe([]string{"http://0.0.0.0:2380", "https://0.0.0.0:2390"},
		[]string{"http://etcd-main-0:2380", "https://etcd-main-0:2390"})).To(BeTrue())
	g.Expect(member.ListenersServe(nil, advertised)).To(BeFalse())
	g.Expect(member.ListenersServe([]string{"https://0.0.0.0:2380"}, nil)).To(BeFalse())
}
