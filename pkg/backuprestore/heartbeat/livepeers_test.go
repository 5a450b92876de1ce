package heartbeat

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/kubernetes"

	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

// TestLivePeersAreMembersWithFreshRenewals: a member whose sidecar renewed its lease (which needs its etcd
// to answer) counts as alive, also when this node's clock runs far ahead of the renewing node's, as long as
// it keeps renewing; an empty lease (as druid creates and the quorum-loss recovery recreates it), a missing
// one and one nobody renews any more never count.
func TestLivePeersAreMembersWithFreshRenewals(t *testing.T) {
	g := NewWithT(t)
	cs := kubernetes.NewForConfigOrDie(env.Config)
	ns := env.CreateNamespace(t)
	c := etcdserver.StartCluster(t, 1, nil)
	m := c.Members[0]
	emptyLease(t, cs, ns, m.Config.Name)
	emptyLease(t, cs, ns, "etcd-main-2")
	const beat = 200 * time.Millisecond
	names := []string{m.Config.Name, "etcd-main-2", "missing"}
	ahead := func() time.Time { return time.Now().Add(time.Hour) } // this node's clock, an hour ahead

	// Leases nobody ever renewed are answered without waiting for a renewal: with an hour's heartbeat
	// that wait would be two hours, so the context's bound (a wait bound, not a speed claim) ends it with
	// an error.
	bounded, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	begin := time.Now()
	live, err := PeerLiveness{Kubernetes: cs, Namespace: ns, Heartbeat: time.Hour}.LivePeers(bounded, names)
	g.Expect(err).NotTo(HaveOccurred(), "leases nobody ever renewed are answered without waiting for a renewal")
	g.Expect(live).To(BeEmpty(), "empty and missing leases are no sign of life")
	renewed, err := PeerLiveness{Kubernetes: cs, Namespace: ns}.Renewed(t.Context(), names)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(renewed).To(BeEmpty(), "no lease was ever renewed")
	t.Logf("DURATION LivePeers with no renewed lease: %s", time.Since(begin).Round(time.Millisecond))

	ml := &MemberLease{Kubernetes: cs, Namespace: ns, Name: m.Config.Name, Etcd: c.Client(t), LocalEndpoint: m.Endpoint(), Log: testr.New(t)}
	g.Expect(ml.Renew(t.Context())).To(Succeed())
	live, err = PeerLiveness{Kubernetes: cs, Namespace: ns, Heartbeat: beat}.LivePeers(t.Context(), names)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(live).To(Equal([]string{m.Config.Name}), "renewed within the window")

	live, err = PeerLiveness{Kubernetes: cs, Namespace: ns, Heartbeat: beat, Now: ahead}.LivePeers(t.Context(), names)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(live).To(BeEmpty(), "a member that stopped renewing is not alive, whatever the clock")
	renewed, err = PeerLiveness{Kubernetes: cs, Namespace: ns, Now: ahead}.Renewed(t.Context(), names)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(renewed).To(Equal([]string{m.Config.Name}), "a member that renewed once has run, however long ago")

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); Run(ctx, beat, ml.Renew, testr.New(t)) }()
	t.Cleanup(func() { cancel(); <-done })
	live, err = PeerLiveness{Kubernetes: cs, Namespace: ns, Heartbeat: beat, Now: ahead}.LivePeers(t.Context(), names)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(live).To(Equal([]string{m.Config.Name}), "a member that keeps renewing lives, even when its renewals look an hour old here")
}

// TestLivePeersReportsWhatItCannotRead: an apiserver that refuses the read leaves liveness unknown, which
// must not read as "nobody lives".
func TestLivePeersReportsWhatItCannotRead(t *testing.T) {
	cfg := *env.Config
	cfg.BearerToken, cfg.CertData, cfg.KeyData, cfg.CertFile, cfg.KeyFile = "not-a-token", nil, nil, "", ""
	cs := kubernetes.NewForConfigOrDie(&cfg)
	_, err := PeerLiveness{Kubernetes: cs, Namespace: "default", Heartbeat: time.Second}.LivePeers(t.Context(), []string{"etcd-main-1"})
	NewWithT(t).Expect(err).To(HaveOccurred(), "LivePeers without access must report an error, not that nobody lives")
}
