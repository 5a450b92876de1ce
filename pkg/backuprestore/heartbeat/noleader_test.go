package heartbeat

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/kubernetes"

	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

// noLeaderReport reads the lease's no-leader report; ok is false without one.
func noLeaderReport(g Gomega, t *testing.T, cs kubernetes.Interface, ns, name string) (podwire.NoLeaderReport, bool) {
	value, found := getLease(t, cs, ns, name).Annotations[podwire.AnnotationNoLeader]
	if !found {
		return podwire.NoLeaderReport{}, false
	}
	report, err := podwire.ParseNoLeaderReport(value)
	g.Expect(err).NotTo(HaveOccurred())
	return report, true
}

// survivorLease starts a three-member cluster and returns the empty member lease of its first member (in
// namespace ns) with the MemberLease that renews it, for a member whose data is present.
func survivorLease(t *testing.T) (cs kubernetes.Interface, ns string, c *etcdserver.Cluster, ml *MemberLease) {
	t.Helper()
	cs = kubernetes.NewForConfigOrDie(env.Config)
	ns = env.CreateNamespace(t)
	c = etcdserver.StartCluster(t, 3, nil)
	survivor := c.Members[0]
	emptyLease(t, cs, ns, survivor.Config.Name)
	ml = &MemberLease{Kubernetes: cs, Namespace: ns, Name: survivor.Config.Name, Etcd: survivor.Client(t), LocalEndpoint: survivor.Endpoint(),
		NoLeader: &NoLeaderWatch{MemberData: func() bool { return true }}, Log: testr.New(t)}
	return cs, ns, c, ml
}

// Two of three members stop: the survivor's etcd runs without a leader, and its sidecar says so on the
// lease (with its data), keeping the time it began across beats; a member of a cluster with a leader
// reports nothing.
func TestSurvivorReportsNoLeaderSinceItLostIt(t *testing.T) {
	g := NewWithT(t)
	cs, ns, c, ml := survivorLease(t)
	name := ml.Name
	now := time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)
	ml.Now = func() time.Time { return now }

	g.Expect(ml.Renew(t.Context())).To(Succeed())
	_, found := noLeaderReport(g, t, cs, ns, name)
	g.Expect(found).To(BeFalse(), "a member with a leader reports nothing")

	c.Members[1].Stop()
	c.Members[2].Stop()
	began := now
	g.Eventually(func(g Gomega) {
		now = now.Add(time.Second)
		g.Expect(ml.Renew(t.Context())).To(Succeed())
		report, found := noLeaderReport(g, t, cs, ns, name)
		g.Expect(found).To(BeTrue())
		g.Expect(report.MemberData).To(BeTrue())
		began = report.Since
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed())

	now = now.Add(10 * time.Second)
	g.Expect(ml.Renew(t.Context())).To(Succeed())
	report, _ := noLeaderReport(g, t, cs, ns, name)
	g.Expect(report.Since).To(Equal(began), "the time without a leader goes on")
	g.Expect(report.ObservedAt).To(Equal(now))
	g.Expect(report.Lasted()).To(BeNumerically(">=", 10*time.Second))
	g.Expect(getLease(t, cs, ns, name).Spec.RenewTime.UTC()).To(Equal(now), "the etcd runs: the lease is renewed")
}

// A member whose etcd does not run reports no leader only for what it knows: its data directory holds
// no member data and the other members answer without a leader. The lease itself is not renewed. Data on
// disk, a peer with a leader, or no peer answering report nothing.
func TestMemberWithoutDataReportsNoLeaderWithoutRenewing(t *testing.T) {
	g := NewWithT(t)
	cs := kubernetes.NewForConfigOrDie(env.Config)
	ns := env.CreateNamespace(t)
	c := etcdserver.StartCluster(t, 3, nil)
	lost, survivor, other := c.Members[1], c.Members[0], c.Members[2]
	name := lost.Config.Name
	lost.Stop()
	emptyLease(t, cs, ns, name)
	dataDir := t.TempDir()
	now := time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)
	peers := etcdserver.NewClient(t, survivor.Endpoint(), other.Endpoint())
	ml := &MemberLease{Kubernetes: cs, Namespace: ns, Name: name, Etcd: etcdserver.NewClient(t, lost.Endpoint()), LocalEndpoint: lost.Endpoint(),
		NoLeader: &NoLeaderWatch{MemberData: HasMemberData(dataDir), Peers: peers}, Now: func() time.Time { return now }, Log: testr.New(t)}

	g.Expect(ml.Renew(t.Context())).NotTo(Succeed(), "the local etcd does not run")
	_, found := noLeaderReport(g, t, cs, ns, name)
	g.Expect(found).To(BeFalse(), "the other members still have a leader")

	other.Stop()
	g.Eventually(func(g Gomega) {
		now = now.Add(time.Second)
		g.Expect(ml.Renew(t.Context())).NotTo(Succeed())
		report, found := noLeaderReport(g, t, cs, ns, name)
		g.Expect(found).To(BeTrue())
		g.Expect(report.MemberData).To(BeFalse())
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed())
	lease := getLease(t, cs, ns, name)
	g.Expect(lease.Spec.RenewTime).To(BeNil(), "a member without a running etcd is not renewed")
	g.Expect(lease.Spec.HolderIdentity).To(BeNil())

	g.Expect(os.MkdirAll(filepath.Join(dataDir, "member", "wal"), 0o700)).To(Succeed())
	g.Expect(ml.Renew(t.Context())).NotTo(Succeed())
	_, found = noLeaderReport(g, t, cs, ns, name)
	g.Expect(found).To(BeFalse(), "data on disk beside a stopped etcd is no lost member")

	g.Expect(os.RemoveAll(filepath.Join(dataDir, "member"))).To(Succeed())
	survivor.Stop()
	g.Expect(ml.Renew(t.Context())).NotTo(Succeed())
	_, found = noLeaderReport(g, t, cs, ns, name)
	g.Expect(found).To(BeFalse(), "nobody answering is no evidence")
}

// Druid counts a report observed before the lease's renewal as stale, so the survivor's report carries
// the instant of the renewal it is written with (the real clock here, which moves between two reads).
func TestSurvivorsReportIsNotOlderThanItsRenewal(t *testing.T) {
	g := NewWithT(t)
	cs, ns, c, ml := survivorLease(t)
	name := ml.Name
	c.Members[1].Stop()
	c.Members[2].Stop()
	g.Eventually(func(g Gomega) {
		g.Expect(ml.Renew(t.Context())).To(Succeed())
		report, found := noLeaderReport(g, t, cs, ns, name)
		g.Expect(found).To(BeTrue())
		g.Expect(report.ObservedAt).NotTo(BeTemporally("<", getLease(t, cs, ns, name).Spec.RenewTime.Time))
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed())
}
