package health

import (
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// ClusterIDMismatch has upstream druid's status and reasons: True with two cluster IDs among members
// that are not Unknown, False with one, Unknown without any, and Unknown when a lease cannot be read.
func TestClusterIDMismatchCondition(t *testing.T) {
	ready, notReady, unknown := druidv1alpha1.EtcdMemberStatusReady, druidv1alpha1.EtcdMemberStatusNotReady, druidv1alpha1.EtcdMemberStatusUnknown
	for _, tc := range []struct {
		name       string
		members    []druidv1alpha1.EtcdMemberStatus
		leases     []coordinationv1.Lease
		wantStatus druidv1alpha1.ConditionStatus
		wantReason string
	}{
		{"one cluster",
			[]druidv1alpha1.EtcdMemberStatus{member("etcd-main-0", ready), member("etcd-main-1", ready), member("etcd-main-2", notReady)},
			[]coordinationv1.Lease{lease("etcd-main-0", "a1:c1:Leader", 0), lease("etcd-main-1", "a2:c1:Member", 0), lease("etcd-main-2", "a3:c1:Member", 0)},
			druidv1alpha1.ConditionFalse, "NoClusterIDMismatchDetected"},
		{"a member in a cluster of its own",
			[]druidv1alpha1.EtcdMemberStatus{member("etcd-main-0", ready), member("etcd-main-1", ready), member("etcd-main-2", notReady)},
			[]coordinationv1.Lease{lease("etcd-main-0", "a1:c1:Leader", 0), lease("etcd-main-1", "a2:c1:Member", 0), lease("etcd-main-2", "a3:c2:Leader", 0)},
			druidv1alpha1.ConditionTrue, "MultipleClusterIDsDetected"},
		{"the other ID is on an Unknown member",
			[]druidv1alpha1.EtcdMemberStatus{member("etcd-main-0", ready), member("etcd-main-1", unknown)},
			[]coordinationv1.Lease{lease("etcd-main-0", "a1:c1:Leader", 0), lease("etcd-main-1", "a2:c2:Leader", 0)},
			druidv1alpha1.ConditionFalse, "NoClusterIDMismatchDetected"},
		{"older sidecars write no cluster ID",
			[]druidv1alpha1.EtcdMemberStatus{member("etcd-main-0", ready)},
			[]coordinationv1.Lease{lease("etcd-main-0", "a1:Leader", 0)},
			druidv1alpha1.ConditionUnknown, "NoClusterIDDetected"},
		{"no members",
			nil, nil,
			druidv1alpha1.ConditionUnknown, "NoClusterIDDetected"},
		{"a lease not renewed yet",
			[]druidv1alpha1.EtcdMemberStatus{member("etcd-main-0", ready), member("etcd-main-1", notReady)},
			[]coordinationv1.Lease{lease("etcd-main-0", "a1:c1:Leader", 0), lease("etcd-main-1", "", -1)},
			druidv1alpha1.ConditionFalse, "NoClusterIDMismatchDetected"},
		{"an unparsable holder",
			[]druidv1alpha1.EtcdMemberStatus{member("etcd-main-0", ready), member("etcd-main-1", ready)},
			[]coordinationv1.Lease{lease("etcd-main-0", "a1:c1:Leader", 0), lease("etcd-main-1", "a:b:c:d", 0)},
			druidv1alpha1.ConditionUnknown, "UnableToParseLeaseHolderIdentity"},
	} {
		c := ClusterIDMismatchCondition(tc.members, tc.leases)
		if c.Type != "ClusterIDMismatch" || c.Status != tc.wantStatus || c.Reason != tc.wantReason {
			t.Errorf("%s: got %s %s %s (%s), want %s %s", tc.name, c.Type, c.Status, c.Reason, c.Message, tc.wantStatus, tc.wantReason)
		}
	}
}

// The status flow writes the condition, and NotChecked while hibernated like the others it computes.
func TestComputeStatusWritesClusterIDMismatch(t *testing.T) {
	e := testEtcd(2)
	leases := []coordinationv1.Lease{lease("etcd-main-0", "a1:c1:Leader", 0), lease("etcd-main-1", "a2:c2:Leader", 0)}
	status := ComputeStatus(Observed{Etcd: e, MemberLeases: leases}, th, now)
	c := druidv1alpha1.FindCondition(status.Conditions, druidv1alpha1.ConditionTypeClusterIDMismatch)
	if c == nil || c.Status != druidv1alpha1.ConditionTrue || c.Message != "members report different cluster IDs (c1: etcd-main-0; c2: etcd-main-1)" {
		t.Fatalf("ClusterIDMismatch = %+v, want True naming both IDs", c)
	}

	e.Spec.Replicas = 0
	status = ComputeStatus(Observed{Etcd: e, MemberLeases: leases}, th, now)
	c = druidv1alpha1.FindCondition(status.Conditions, druidv1alpha1.ConditionTypeClusterIDMismatch)
	if c == nil || c.Reason != druidv1alpha1.ReasonNotChecked {
		t.Fatalf("hibernated: ClusterIDMismatch = %+v, want NotChecked", c)
	}
}
