package heartbeat

import (
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/kubernetes"

	"github.com/gardener-etcd/gardener-etcd/test/etcdserver"
)

// TestLivePeersAreMembersWithFreshRenewals: a member whose sidecar renewed its lease (which needs its etcd
// to answer) counts as alive until the window has passed; an empty lease (as druid creates and the
// quorum-loss recovery recreates it) and a missing one never count.
func TestLivePeersAreMembersWithFreshRenewals(t *testing.T) {
	g := NewWithT(t)
	cs := kubernetes.NewForConfigOrDie(env.Config)
	ns := env.CreateNamespace(t)
	c := etcdserver.StartCluster(t, 1, nil)
	m := c.Members[0]
	emptyLease(t, cs, ns, m.Config.Name)
	emptyLease(t, cs, ns, "etcd-main-2")

	live, err := LivePeers(t.Context(), cs, ns, []string{m.Config.Name, "etcd-main-2", "missing"}, time.Minute, time.Now())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(live).To(BeEmpty(), "empty and missing leases are no sign of life")

	ml := &MemberLease{Kubernetes: cs, Namespace: ns, Name: m.Config.Name, Etcd: c.Client(t), LocalEndpoint: m.Endpoint(), Log: testr.New(t)}
	g.Expect(ml.Renew(t.Context())).To(Succeed())
	renewed := getLease(t, cs, ns, m.Config.Name).Spec.RenewTime.Time

	live, err = LivePeers(t.Context(), cs, ns, []string{m.Config.Name, "etcd-main-2"}, time.Minute, renewed.Add(59*time.Second))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(live).To(Equal([]string{m.Config.Name}), "renewed within the window")

	live, err = LivePeers(t.Context(), cs, ns, []string{m.Config.Name, "etcd-main-2"}, time.Minute, renewed.Add(time.Minute))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(live).To(BeEmpty(), "a renewal as old as the window is stale")
}

// TestLivePeersReportsWhatItCannotRead: an apiserver that refuses the read leaves liveness unknown, which
// must not read as "nobody lives".
func TestLivePeersReportsWhatItCannotRead(t *testing.T) {
	cfg := *env.Config
	cfg.BearerToken, cfg.CertData, cfg.KeyData, cfg.CertFile, cfg.KeyFile = "not-a-token", nil, nil, "", ""
	cs := kubernetes.NewForConfigOrDie(&cfg)
	_, err := LivePeers(t.Context(), cs, "default", []string{"etcd-main-1"}, time.Minute, time.Now())
	NewWithT(t).Expect(err).To(HaveOccurred(), "LivePeers without access must report an error, not that nobody lives")
}
