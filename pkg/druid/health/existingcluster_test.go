package health

import (
	"testing"

	. "github.com/onsi/gomega"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

func joiningEtcd() *druidv1alpha1.Etcd {
	e := testEtcd(3)
	e.Spec.Etcd.BootstrapWithExistingCluster = &druidv1alpha1.BootstrapWithExistingCluster{
		Members:         []druidv1alpha1.BootstrapExistingMember{{Name: "etcd-old-0", PeerURLs: []string{"http://etcd-old-0:2380"}}},
		ClientEndpoints: []string{"http://etcd-old-client:2379"},
	}
	return e
}

// TestJoinIsReportedOnceAllMembersAreReady: while members are missing the join is in progress; once all
// report Ready, status.bootstrapWithExistingCluster records the source members, and both the record and
// the True condition stay when a member fails later and when the spec field is removed.
func TestJoinIsReportedOnceAllMembersAreReady(t *testing.T) {
	g := NewWithT(t)
	etcd := joiningEtcd()
	leases, pods := threeHealthyMembers()

	s := ComputeStatus(Observed{Etcd: etcd, StatefulSet: rolledOutStatefulSet(3), Pods: pods, MemberLeases: leases[:2]}, th, now)
	g.Expect(conditionsByType(s)).To(HaveKeyWithValue(druidv1alpha1.ConditionTypeBootstrappedWithExistingCluster, "False/BootstrapInProgress"))
	g.Expect(s.BootstrapWithExistingCluster).To(BeNil())

	s = ComputeStatus(Observed{Etcd: etcd, StatefulSet: rolledOutStatefulSet(3), Pods: pods, MemberLeases: leases}, th, now)
	g.Expect(conditionsByType(s)).To(HaveKeyWithValue(druidv1alpha1.ConditionTypeBootstrappedWithExistingCluster, "True/BootstrapSucceeded"))
	g.Expect(s.BootstrapWithExistingCluster).NotTo(BeNil())
	g.Expect(s.BootstrapWithExistingCluster.JoinedAt.Time).To(Equal(now))
	g.Expect(s.BootstrapWithExistingCluster.Members).To(Equal([]druidv1alpha1.BootstrapJoinedMember{{Name: "etcd-old-0", PeerURLs: []string{"http://etcd-old-0:2380"}}}))

	etcd.Status = s
	etcd.Spec.Etcd.BootstrapWithExistingCluster = nil
	later := ComputeStatus(Observed{Etcd: etcd, StatefulSet: rolledOutStatefulSet(3), Pods: pods, MemberLeases: leases[:1]}, th, now.Add(th.NotReady*2))
	g.Expect(conditionsByType(later)).To(HaveKeyWithValue(druidv1alpha1.ConditionTypeBootstrappedWithExistingCluster, "True/BootstrapSucceeded"))
	g.Expect(later.BootstrapWithExistingCluster.JoinedAt.Time).To(Equal(now), "recorded once")
}

// TestNoJoinNoCondition: an Etcd that joins nothing gets neither the condition nor the record.
func TestNoJoinNoCondition(t *testing.T) {
	leases, pods := threeHealthyMembers()
	s := ComputeStatus(Observed{Etcd: testEtcd(3), StatefulSet: rolledOutStatefulSet(3), Pods: pods, MemberLeases: leases}, th, now)
	NewWithT(t).Expect(conditionsByType(s)).NotTo(HaveKey(druidv1alpha1.ConditionTypeBootstrappedWithExistingCluster))
	NewWithT(t).Expect(s.BootstrapWithExistingCluster).To(BeNil())
}
