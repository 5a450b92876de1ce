package decide

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
)

// reportNoLeader makes the sidecar of ordinal i report on its lease that it has seen no leader for
// lasted, last observed at observedAt; memberData false is a member that lost its data.
func (c *cluster) reportNoLeader(i int, memberData bool, lasted time.Duration, observedAt time.Time) *cluster {
	l := c.lease(i)
	if l.Annotations == nil {
		l.Annotations = map[string]string{}
	}
	l.Annotations[podwire.AnnotationNoLeader] = podwire.NoLeaderReport{Since: observedAt.Add(-lasted), ObservedAt: observedAt, MemberData: memberData}.Encode()
	return c
}

// dataLost is ordinal i 40 s after it lost its data: its lease was last renewed 50 s ago (younger than
// the Unknown threshold), its new pod is not ready, and its sidecar has reported no member data and no
// leader for lasted.
func (c *cluster) dataLost(i int, lasted time.Duration) *cluster {
	return c.renew(i, ago(50*time.Second)).pod(i, false, 40*time.Second).reportNoLeader(i, false, lasted, ago(2*time.Second))
}

// survivorWithoutLeader is ordinal i renewing its lease with its data and no leader for lasted.
func (c *cluster) survivorWithoutLeader(i int, lasted time.Duration) *cluster {
	return c.renew(i, ago(time.Second)).pod(i, false, time.Hour).reportNoLeader(i, true, lasted, ago(time.Second))
}

// TestDecideQuorumLossConfirmedByTheMembers is case 10 without waiting for the lease grace periods: the
// members' sidecars report positively that a majority lost its data and the rest has no leader, for the
// confirmation window. Everything short of that waits for the lease thresholds as before: silence is no
// proof. Grace periods: Unknown 1 m, NotReady 5 m; every lease here is younger than 1 m.
func TestDecideQuorumLossConfirmedByTheMembers(t *testing.T) {
	confirmed := QuorumLossConfirmation + time.Second
	current := func(c *cluster) *cluster { return c.withStore().snapshotsAt(ago(time.Hour), ago(30*time.Second)) }
	rows := []decideRow{
		{name: "two of three lost their data, the third has no leader, both confirmed: bootstrap again at once",
			cluster: func() *cluster {
				return current(newCluster(3)).dataLost(1, confirmed).dataLost(2, confirmed).survivorWithoutLeader(0, confirmed+20*time.Second).settle(now)
			},
			actions:    []string{"10 StartQuorumRecovery etcd-main-1,etcd-main-2"},
			members:    map[string]string{"etcd-main-0": "Ready/LeaseSucceeded", "etcd-main-1": "NotReady/DataLost", "etcd-main-2": "NotReady/DataLost"},
			conditions: map[druidv1alpha1.ConditionType]druidv1alpha1.ConditionStatus{ready: isFalse, backupReady: isTrue}},
		{name: "three of five lost their data, the two others have no leader: bootstrap again at once",
			cluster: func() *cluster {
				return current(newCluster(5)).dataLost(0, confirmed).dataLost(2, confirmed).dataLost(4, confirmed).
					survivorWithoutLeader(1, confirmed).survivorWithoutLeader(3, confirmed).settle(now)
			},
			actions: []string{"10 StartQuorumRecovery etcd-main-0,etcd-main-2,etcd-main-4"}},
		{name: "the lost members' reports are younger than the confirmation window: wait",
			cluster: func() *cluster {
				return current(newCluster(3)).dataLost(1, confirmed).dataLost(2, QuorumLossConfirmation-5*time.Second).survivorWithoutLeader(0, confirmed).settle(now)
			},
			actions:    []string{},
			conditions: map[druidv1alpha1.ConditionType]druidv1alpha1.ConditionStatus{ready: isFalse}},
		{name: "the survivor's no leader is younger than the confirmation window: wait",
			cluster: func() *cluster {
				return current(newCluster(3)).dataLost(1, confirmed).dataLost(2, confirmed).survivorWithoutLeader(0, 5*time.Second).settle(now)
			},
			actions: []string{}},
		{name: "one of three lost its data, two have no leader: a quorum of data is left, wait",
			cluster: func() *cluster {
				return current(newCluster(3)).dataLost(2, confirmed).survivorWithoutLeader(0, confirmed).survivorWithoutLeader(1, confirmed).settle(now)
			},
			actions:    []string{},
			members:    map[string]string{"etcd-main-2": "NotReady/DataLost"},
			conditions: map[druidv1alpha1.ConditionType]druidv1alpha1.ConditionStatus{ready: isTrue}},
		{name: "two lost their data, the third is silent (no report, lease not renewed since): wait for the grace periods",
			cluster: func() *cluster {
				return current(newCluster(3)).dataLost(1, confirmed).dataLost(2, confirmed).renew(0, ago(50*time.Second)).pod(0, false, time.Hour).settle(now)
			},
			actions: []string{}},
		{name: "two lost their data, the third renews without a report (it sees a leader): wait",
			cluster: func() *cluster {
				return current(newCluster(3)).dataLost(1, confirmed).dataLost(2, confirmed).renew(0, ago(time.Second)).settle(now)
			},
			actions: []string{}},
		{name: "two lost their data, the third's report went stale: wait",
			cluster: func() *cluster {
				return current(newCluster(3)).dataLost(1, confirmed).dataLost(2, confirmed).renew(0, ago(40*time.Second)).
					reportNoLeader(0, true, confirmed, ago(40*time.Second)).settle(now)
			},
			actions: []string{}},
		{name: "two report lost data but one's pod is Ready: its etcd may serve, wait",
			cluster: func() *cluster {
				return current(newCluster(3)).dataLost(1, confirmed).dataLost(2, confirmed).pod(2, true, 40*time.Second).survivorWithoutLeader(0, confirmed).settle(now)
			},
			actions: []string{}},
		{name: "every member lost its data: the first member restores by itself, druid waits",
			cluster: func() *cluster {
				return current(newCluster(3)).dataLost(0, confirmed).dataLost(1, confirmed).dataLost(2, confirmed).settle(now)
			},
			actions: []string{}},
		{name: "two lost their data, the third has no leader, no backup store: manual action",
			cluster: func() *cluster {
				return newCluster(3).dataLost(1, confirmed).dataLost(2, confirmed).survivorWithoutLeader(0, confirmed).settle(now)
			},
			actions: []string{"10 ManualInterventionRequired etcd-main-1,etcd-main-2"}},
	}
	runDecideRows(t, rows)
}

// The message of a recovery the members confirmed says so, so that an operator tells it from one that
// waited for the lease grace periods.
func TestQuorumLossConfirmedByTheMembersSaysSo(t *testing.T) {
	g := NewWithT(t)
	confirmed := QuorumLossConfirmation + time.Second
	actions := Decide(newCluster(3).withStore().snapshotsAt(ago(time.Hour), ago(30*time.Second)).
		dataLost(1, confirmed).dataLost(2, confirmed).survivorWithoutLeader(0, confirmed).settle(now).input())
	g.Expect(actions).To(HaveLen(1))
	g.Expect(actions[0].Message).To(And(ContainSubstring("confirmed by the members"), ContainSubstring("etcd-main-1, etcd-main-2"),
		HaveSuffix("bootstrapping the cluster again from the backup")))
}
