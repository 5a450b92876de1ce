package heartbeat

import (
	"strconv"
	"testing"

	"github.com/go-logr/logr/testr"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

// The cluster IDs the member leases record: none from a lease druid created and nobody renewed, nor from a
// missing one; the renewing member's cluster ID once it renewed; each cluster once when the leases record
// two.
func TestClusterIDRecordsReadTheRenewedLeases(t *testing.T) {
	g := NewWithT(t)
	cs := kubernetes.NewForConfigOrDie(env.Config)
	ns := env.CreateNamespace(t)
	records := ClusterIDRecords{Kubernetes: cs, Namespace: ns}
	members := []string{"etcd-main-0", "etcd-main-1", "etcd-main-2"}
	for _, name := range members {
		emptyLease(t, cs, ns, name)
	}

	ids, err := records.ClusterIDs(t.Context(), append(members, "etcd-main-9"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ids).To(BeEmpty(), "leases nobody renewed record no cluster")

	a, b := etcdserver.Start(t).Members[0], etcdserver.Start(t).Members[0]
	renew := func(name string, m *etcdserver.Member) {
		ml := &MemberLease{Kubernetes: cs, Namespace: ns, Name: name, Etcd: m.Client(t), LocalEndpoint: m.Endpoint(), Log: testr.New(t)}
		g.Expect(ml.Renew(t.Context())).To(Succeed())
	}
	clusterID := func(m *etcdserver.Member) uint64 {
		_, hex := memberIDs(m)
		id, err := strconv.ParseUint(hex, 16, 64)
		g.Expect(err).NotTo(HaveOccurred())
		return id
	}
	renew("etcd-main-0", a)
	renew("etcd-main-1", a)
	ids, err = records.ClusterIDs(t.Context(), members)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ids).To(Equal([]uint64{clusterID(a)}))

	renew("etcd-main-2", b)
	ids, err = records.ClusterIDs(t.Context(), members)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ids).To(ConsistOf(clusterID(a), clusterID(b)))
}

func TestClusterIDOfReadsTheThreePartHolderIdentity(t *testing.T) {
	g := NewWithT(t)
	id, ok := ClusterIDOf("8e9e05c52164694d:cdf818194e3a8c32:Leader")
	g.Expect(ok).To(BeTrue())
	g.Expect(id).To(Equal(uint64(0xcdf818194e3a8c32)))
	for _, holder := range []string{"", "8e9e05c52164694d:Member", "8e9e05c52164694d:zz:Member", "8e9e05c52164694d:0:Member"} {
		_, ok := ClusterIDOf(holder)
		g.Expect(ok).To(BeFalse(), holder)
	}
}

// Druid's joined mark on any of the Etcd's member leases says the Etcd joined its source cluster; a
// missing lease and leases without the mark say nothing, and a renewal keeps the mark.
func TestJoinedExistingClusterReadsDruidsMark(t *testing.T) {
	g := NewWithT(t)
	g.Expect(AnnotationJoinedExistingCluster).To(Equal(druidv1alpha1.JoinedExistingClusterAnnotation))
	cs := kubernetes.NewForConfigOrDie(env.Config)
	ns := env.CreateNamespace(t)
	records := ClusterIDRecords{Kubernetes: cs, Namespace: ns}
	members := []string{"etcd-main-0", "etcd-main-1"}
	for _, name := range members {
		emptyLease(t, cs, ns, name)
	}
	joined, err := records.JoinedExistingCluster(t.Context(), append(members, "etcd-main-9"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(joined).To(BeFalse(), "no lease carries the mark")

	lease := getLease(t, cs, ns, "etcd-main-1")
	metav1.SetMetaDataAnnotation(&lease.ObjectMeta, druidv1alpha1.JoinedExistingClusterAnnotation, "true")
	_, err = cs.CoordinationV1().Leases(ns).Update(t.Context(), lease, metav1.UpdateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	m := etcdserver.Start(t).Members[0]
	ml := &MemberLease{Kubernetes: cs, Namespace: ns, Name: "etcd-main-1", Etcd: m.Client(t), LocalEndpoint: m.Endpoint(), Log: testr.New(t)}
	g.Expect(ml.Renew(t.Context())).To(Succeed())

	joined, err = records.JoinedExistingCluster(t.Context(), members)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(joined).To(BeTrue(), "the renewed lease keeps druid's mark")
}
