package heartbeat

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	. "github.com/onsi/gomega"
	"go.etcd.io/etcd/server/v3/embed"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/gardener-etcd/gardener-etcd/test/support/envtest"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
	"github.com/gardener-etcd/gardener-etcd/test/support/testpki"
)

var env *envtest.Env

func TestMain(m *testing.M) { envtest.Main(m, &env) }

// emptyLease creates the lease as druid does: no holder, no annotation.
func emptyLease(t *testing.T, cs kubernetes.Interface, ns, name string) {
	t.Helper()
	if _, err := cs.CoordinationV1().Leases(ns).Create(t.Context(), &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func getLease(t *testing.T, cs kubernetes.Interface, ns, name string) *coordinationv1.Lease {
	t.Helper()
	l, err := cs.CoordinationV1().Leases(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func memberIDs(m *etcdserver.Member) (string, string) {
	return fmt.Sprintf("%x", uint64(m.Etcd.Server.MemberID())), fmt.Sprintf("%x", uint64(m.Etcd.Server.Cluster().ID()))
}

func TestSingleMemberWithHTTPAndHTTPSPeerURLs(t *testing.T) {
	g := NewWithT(t)
	cs := kubernetes.NewForConfigOrDie(env.Config)
	ns := env.CreateNamespace(t)
	now := time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)

	ca := testpki.NewCA(t)
	peer := ca.Issue(t, "peer")
	peerURL := etcdserver.FreeURL(t)
	peerURL.Scheme = "https"
	for _, tc := range []struct {
		name    string
		cfg     etcdserver.MemberConfig
		wantTLS string
	}{
		{name: "etcd-main-0", cfg: etcdserver.MemberConfig{Name: "etcd-main-0"}, wantTLS: "false"},
		{name: "etcd-peer-tls-0", cfg: etcdserver.MemberConfig{Name: "etcd-peer-tls-0", PeerURL: peerURL,
			Configure: func(c *embed.Config) { c.PeerTLSInfo = ca.TLSInfo(peer) }}, wantTLS: "true"},
	} {
		m := etcdserver.StartMember(t, tc.cfg)
		emptyLease(t, cs, ns, tc.name)
		ml := &MemberLease{Kubernetes: cs, Namespace: ns, Name: tc.name, Etcd: m.Client(t), LocalEndpoint: m.Endpoint(),
			Now: func() time.Time { return now }, Log: testr.New(t)}
		g.Expect(ml.Renew(t.Context())).To(Succeed())

		l := getLease(t, cs, ns, tc.name)
		id, cluster := memberIDs(m)
		g.Expect(*l.Spec.HolderIdentity).To(Equal(id+":"+cluster+":Leader"), tc.name)
		g.Expect(l.Spec.RenewTime.UTC()).To(Equal(now))
		g.Expect(l.Annotations).To(HaveKeyWithValue(AnnotationTLSEnabled, tc.wantTLS), tc.name)
	}
}

func TestFollowerRenewsPeriodicallyAsMember(t *testing.T) {
	g := NewWithT(t)
	cs := kubernetes.NewForConfigOrDie(env.Config)
	ns := env.CreateNamespace(t)
	c := etcdserver.StartCluster(t, 3, nil)
	var follower *etcdserver.Member
	for _, m := range c.Members {
		if m != c.Leader() {
			follower = m
		}
	}
	emptyLease(t, cs, ns, follower.Config.Name)
	ml := &MemberLease{Kubernetes: cs, Namespace: ns, Name: follower.Config.Name, Etcd: c.Client(t), LocalEndpoint: follower.Endpoint(), Log: testr.New(t)}

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); Run(ctx, 200*time.Millisecond, ml.Renew, testr.New(t)) }()
	t.Cleanup(func() { cancel(); <-done })

	var first time.Time
	g.Eventually(func() *metav1.MicroTime { return getLease(t, cs, ns, follower.Config.Name).Spec.RenewTime }, 10*time.Second).ShouldNot(BeNil())
	l := getLease(t, cs, ns, follower.Config.Name)
	first = l.Spec.RenewTime.Time
	id, cluster := memberIDs(follower)
	g.Expect(*l.Spec.HolderIdentity).To(Equal(id + ":" + cluster + ":Member"))
	g.Expect(l.Annotations).To(HaveKeyWithValue(AnnotationTLSEnabled, "false"))
	g.Eventually(func() time.Time { return getLease(t, cs, ns, follower.Config.Name).Spec.RenewTime.Time }, 10*time.Second).
		Should(BeTemporally(">", first), "the lease is renewed again at the next beat")

	cancel()
	<-done
}

func TestRenewReportsAMissingLease(t *testing.T) {
	cs := kubernetes.NewForConfigOrDie(env.Config)
	m := etcdserver.Start(t).Members[0]
	ml := &MemberLease{Kubernetes: cs, Namespace: env.CreateNamespace(t), Name: "absent", Etcd: m.Client(t), LocalEndpoint: m.Endpoint(), Log: testr.New(t)}
	if err := ml.Renew(t.Context()); err == nil {
		t.Fatal("renewing a lease druid did not create: want an error")
	}
}

// The data directories the initializer moved aside are listed on the lease while they exist, so that an
// operator finds data the member does not serve; the annotation goes once they are gone.
func TestMovedAsideDataDirsAreListedOnTheLease(t *testing.T) {
	g := NewWithT(t)
	cs := kubernetes.NewForConfigOrDie(env.Config)
	ns := env.CreateNamespace(t)
	m := etcdserver.Start(t).Members[0]
	emptyLease(t, cs, ns, "etcd-main-0")
	aside := []string{"/var/etcd/data/new.etcd.invalid-20261124T010203Z", "/var/etcd/data/new.etcd.invalid-20261124T010203Z-2"}
	ml := &MemberLease{Kubernetes: cs, Namespace: ns, Name: "etcd-main-0", Etcd: m.Client(t), LocalEndpoint: m.Endpoint(),
		MovedAside: func() []string { return aside }, Log: testr.New(t)}
	g.Expect(ml.Renew(t.Context())).To(Succeed())
	g.Expect(getLease(t, cs, ns, "etcd-main-0").Annotations).To(HaveKeyWithValue(AnnotationMovedAside, aside[0]+","+aside[1]))
	aside = nil
	g.Expect(ml.Renew(t.Context())).To(Succeed())
	g.Expect(getLease(t, cs, ns, "etcd-main-0").Annotations).NotTo(HaveKey(AnnotationMovedAside))
}
