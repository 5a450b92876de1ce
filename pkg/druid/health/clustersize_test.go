package health

import (
	"testing"

	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

func TestRecordedClusterSize(t *testing.T) {
	leases, _ := threeHealthyMembers()
	joinedOne := []coordinationv1.Lease{leases[0], lease(leases[1].Name, "", -1), lease(leases[2].Name, "", -1)}
	for name, tc := range map[string]struct {
		annotation string
		leases     []coordinationv1.Lease
		want       int32
	}{
		"recorded":                      {annotation: "1", leases: leases, want: 1},
		"not recorded, all members ran": {leases: leases, want: 3},
		"not recorded, scale-up 1 → 3, one member ran": {leases: joinedOne, want: 1},
		"not recorded, nothing ran yet":                {leases: joinedOne[1:], want: 0},
		"garbage is no record":                         {annotation: "three", leases: joinedOne, want: 1},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			sts := rolledOutStatefulSet(3)
			if tc.annotation != "" {
				sts.Annotations = map[string]string{druidv1alpha1.ClusterSizeAnnotation: tc.annotation}
			}
			g.Expect(RecordedClusterSize(testEtcd(3), sts, tc.leases)).To(Equal(tc.want))
		})
	}
	NewWithT(t).Expect(RecordedClusterSize(testEtcd(3), nil, leases)).To(BeZero(), "no StatefulSet, nothing recorded")
}

// An Etcd adopted from upstream etcd-druid in the middle of a 1 → 3 scale-up: upstream's status has no
// cluster size and the StatefulSet no record, the StatefulSet already runs 3 replicas and only member 0 is
// in the cluster. The single healthy member is quorate, not "1 of 3 members".
func TestAdoptedScaleUpIsQuorate(t *testing.T) {
	g := NewWithT(t)
	leases, pods := threeHealthyMembers()
	leases = []coordinationv1.Lease{leases[0], lease(leases[1].Name, "", -1), lease(leases[2].Name, "", -1)}
	etcd, sts := testEtcd(3), rolledOutStatefulSet(3)
	o := Observed{Etcd: etcd, StatefulSet: sts, Pods: pods, MemberLeases: leases, ClusterSize: RecordedClusterSize(etcd, sts, leases)}
	s := ComputeStatus(o, th, now)
	g.Expect(conditionsByType(s)).To(HaveKeyWithValue(druidv1alpha1.ConditionTypeReady, "True/Quorate"))
	g.Expect(ClusterSizeMarker(sts, NextClusterSize(o, s))).To(Equal(map[string]string{druidv1alpha1.ClusterSizeAnnotation: "1"}),
		"the size is recorded for the next runs")
}
