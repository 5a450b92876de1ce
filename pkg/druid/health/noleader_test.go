package health

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
)

// reporting adds a no-leader report to l: no leader for lasted, observed observedAgo before now.
func reporting(l coordinationv1.Lease, memberData bool, lasted, observedAgo time.Duration) coordinationv1.Lease {
	observed := now.Add(-observedAgo)
	l.Annotations = map[string]string{podwire.AnnotationNoLeader: podwire.NoLeaderReport{
		Since: observed.Add(-lasted), ObservedAt: observed, MemberData: memberData}.Encode()}
	return l
}

func TestFreshNoLeaderReport(t *testing.T) {
	const holder = "8e9e05c52164694d:cdf818194e3a8c32:Member"
	freshness := NoLeaderReportFreshness(testEtcd(3))
	for name, tc := range map[string]struct {
		lease     coordinationv1.Lease
		wantFresh bool
	}{
		"no report":                        {lease: lease("etcd-main-1", holder, 40*time.Second)},
		"observed a beat ago":              {lease: reporting(lease("etcd-main-1", holder, 40*time.Second), false, time.Minute, 10*time.Second), wantFresh: true},
		"observed three beats ago: stale":  {lease: reporting(lease("etcd-main-1", holder, 40*time.Second), false, time.Minute, 30*time.Second)},
		"renewed after the report: stale":  {lease: reporting(lease("etcd-main-1", holder, time.Second), false, time.Minute, 5*time.Second)},
		"renewed with the report (serves)": {lease: reporting(lease("etcd-main-1", holder, time.Second), true, time.Minute, time.Second), wantFresh: true},
		"unreadable": {lease: func() coordinationv1.Lease {
			l := lease("etcd-main-1", holder, 40*time.Second)
			l.Annotations = map[string]string{podwire.AnnotationNoLeader: "yes"}
			return l
		}()},
	} {
		t.Run(name, func(t *testing.T) {
			_, fresh := FreshNoLeaderReport(&tc.lease, freshness, now)
			NewWithT(t).Expect(fresh).To(Equal(tc.wantFresh))
		})
	}
}

// A member whose sidecar reports lost data without a leader is NotReady at once, even with a lease that
// is younger than the Unknown threshold; a stale report, a report of a member with data, or a Ready pod
// leave the lease's verdict.
func TestMembersReportingLostDataAreNotReady(t *testing.T) {
	g := NewWithT(t)
	const holder = "8e9e05c52164694d:cdf818194e3a8c32:Member"
	etcd := testEtcd(4)
	leases := []coordinationv1.Lease{
		reporting(lease("etcd-main-0", holder, time.Second), true, time.Minute, time.Second),
		reporting(lease("etcd-main-1", holder, 40*time.Second), false, 20*time.Second, 5*time.Second),
		reporting(lease("etcd-main-2", holder, 40*time.Second), false, 20*time.Second, 35*time.Second),
		reporting(lease("etcd-main-3", holder, 40*time.Second), false, 20*time.Second, 5*time.Second),
	}
	pods := map[string]*corev1.Pod{"etcd-main-0": pod("etcd-main-0", false), "etcd-main-1": pod("etcd-main-1", false),
		"etcd-main-2": pod("etcd-main-2", false), "etcd-main-3": pod("etcd-main-3", true)}
	got := Members(etcd, leases, pods, th, now)
	g.Expect(got).To(HaveLen(4))
	want := []struct {
		status druidv1alpha1.EtcdMemberConditionStatus
		reason string
	}{
		{druidv1alpha1.EtcdMemberStatusReady, druidv1alpha1.MemberReasonLeaseSucceeded},
		{druidv1alpha1.EtcdMemberStatusNotReady, MemberReasonDataLost},
		{druidv1alpha1.EtcdMemberStatusReady, druidv1alpha1.MemberReasonLeaseSucceeded},
		{druidv1alpha1.EtcdMemberStatusReady, druidv1alpha1.MemberReasonLeaseSucceeded},
	}
	for i, w := range want {
		g.Expect(got[i].Status).To(Equal(w.status), got[i].Name)
		g.Expect(got[i].Reason).To(Equal(w.reason), got[i].Name)
	}
}
