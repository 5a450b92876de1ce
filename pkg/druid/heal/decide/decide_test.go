package decide

import (
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

const (
	allReady    = druidv1alpha1.ConditionTypeAllMembersReady
	ready       = druidv1alpha1.ConditionTypeReady
	backupReady = druidv1alpha1.ConditionTypeBackupReady
	isTrue      = druidv1alpha1.ConditionTrue
	isFalse     = druidv1alpha1.ConditionFalse
)

func ago(d time.Duration) time.Time { return now.Add(-d) }

// summary renders actions as "<case> <kind> <members>" lines, so that a table row states them readably.
func summary(actions []Action) []string {
	out := []string{}
	for _, a := range actions {
		out = append(out, strings.TrimSpace(fmt.Sprintf("%d %s %s", a.Case, a.Kind, strings.Join(a.Members, ","))))
	}
	return out
}

// TestDecide is the decision table (cases 1–13): for each observed state, the actions Decide
// returns and — for the status cases 2–8 — the member statuses and conditions the status write produces.
// Grace periods: Unknown 1 m, NotReady 5 m.
// decideRow is a row of the decision tables: a cluster, the actions Decide returns for it (summary), and
// the computed members ("Status/Reason") and conditions it must show.
type decideRow struct {
	name       string
	cluster    func() *cluster
	actions    []string
	members    map[string]string // computed member → "Status/Reason"
	conditions map[druidv1alpha1.ConditionType]druidv1alpha1.ConditionStatus
}

// runDecideRows runs each row as a subtest.
func runDecideRows(t *testing.T, rows []decideRow) {
	t.Helper()
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			g := NewWithT(t)
			in := row.cluster().input()
			g.Expect(summary(Decide(in))).To(Equal(row.actions))
			for name, want := range row.members {
				found := false
				for _, m := range in.Computed.Members {
					if m.Name == name {
						found = true
						g.Expect(string(m.Status)+"/"+m.Reason).To(Equal(want), name)
					}
				}
				g.Expect(found).To(BeTrue(), "member %s in the computed status", name)
			}
			for ct, want := range row.conditions {
				g.Expect(conditionIs(in.Computed, ct, want)).To(BeTrue(), "computed condition %s should be %s", ct, want)
			}
		})
	}
}

func TestDecide(t *testing.T) {
	rows := []decideRow{
		{name: "1 pink of health: nothing to do",
			cluster:    func() *cluster { return newCluster(3).withStore().settle(now) },
			actions:    []string{},
			conditions: map[druidv1alpha1.ConditionType]druidv1alpha1.ConditionStatus{ready: isTrue, allReady: isTrue}},
		{name: "2 lease expired while the stored member says Ready",
			cluster:    func() *cluster { return newCluster(3).renew(2, ago(90*time.Second)).settle(ago(60 * time.Second)) },
			actions:    []string{"2 WriteStatus etcd-main-2", "4 WriteStatus"},
			members:    map[string]string{"etcd-main-0": "Ready/LeaseSucceeded", "etcd-main-2": "Unknown/LeaseExpired"},
			conditions: map[druidv1alpha1.ConditionType]druidv1alpha1.ConditionStatus{ready: isTrue, allReady: isFalse}},
		{name: "2 lease renewed again while the stored member says Unknown",
			cluster: func() *cluster {
				return newCluster(3).renew(2, ago(90*time.Second)).settle(now).renew(2, ago(time.Second))
			},
			actions:    []string{"2 WriteStatus etcd-main-2", "3 WriteStatus"},
			members:    map[string]string{"etcd-main-2": "Ready/LeaseSucceeded"},
			conditions: map[druidv1alpha1.ConditionType]druidv1alpha1.ConditionStatus{allReady: isTrue}},
		{name: "3 all members Ready, AllMembersReady stale False",
			cluster:    func() *cluster { return newCluster(3).settle(now).storedCondition(allReady, isFalse) },
			actions:    []string{"3 WriteStatus"},
			conditions: map[druidv1alpha1.ConditionType]druidv1alpha1.ConditionStatus{allReady: isTrue}},
		{name: "4 a member NotReady, AllMembersReady stale True",
			cluster: func() *cluster {
				return newCluster(3).pod(2, false, time.Hour).renew(2, ago(2*time.Minute)).settle(now).storedCondition(allReady, isTrue)
			},
			actions:    []string{"4 WriteStatus"},
			members:    map[string]string{"etcd-main-2": "NotReady/PodNotReady"},
			conditions: map[druidv1alpha1.ConditionType]druidv1alpha1.ConditionStatus{allReady: isFalse, ready: isTrue}},
		{name: "5 majority Ready, Ready stale False",
			cluster: func() *cluster {
				return newCluster(3).pod(2, false, time.Hour).renew(2, ago(2*time.Minute)).settle(now).storedCondition(ready, isFalse)
			},
			actions:    []string{"5 WriteStatus"},
			conditions: map[druidv1alpha1.ConditionType]druidv1alpha1.ConditionStatus{ready: isTrue}},
		{name: "6 majority NotReady, Ready stale True",
			cluster: func() *cluster {
				return newCluster(3).pod(1, false, time.Hour).pod(2, false, time.Hour).renew(1, ago(2*time.Minute)).renew(2, ago(2*time.Minute)).
					settle(now).storedCondition(ready, isTrue)
			},
			actions:    []string{"6 WriteStatus"},
			members:    map[string]string{"etcd-main-1": "NotReady/PodNotReady", "etcd-main-2": "NotReady/PodNotReady"},
			conditions: map[druidv1alpha1.ConditionType]druidv1alpha1.ConditionStatus{ready: isFalse}},
		{name: "7 member Unknown past the Unknown grace period",
			cluster: func() *cluster { return newCluster(3).renew(2, ago(7*time.Minute)).settle(ago(5 * time.Minute)) },
			actions: []string{"7 WriteStatus etcd-main-2"},
			members: map[string]string{"etcd-main-2": "NotReady/UnknownGracePeriodExceeded"}},
		{name: "8 pod not ready before the member could report it",
			cluster: func() *cluster {
				return newCluster(3).settle(ago(30*time.Second)).renew(2, ago(2*time.Minute)).pod(2, false, time.Hour)
			},
			actions:    []string{"4 WriteStatus", "8 WriteStatus etcd-main-2"},
			members:    map[string]string{"etcd-main-2": "NotReady/PodNotReady"},
			conditions: map[druidv1alpha1.ConditionType]druidv1alpha1.ConditionStatus{allReady: isFalse, ready: isTrue}},
		{name: "9 one of 3 NotReady past the grace period: delete its pod",
			cluster: func() *cluster {
				return newCluster(3).renew(2, ago(20*time.Minute)).pod(2, false, time.Hour).settle(ago(10 * time.Minute))
			},
			actions: []string{"9 DeletePods etcd-main-2"}},
		{name: "9 lease stale past the grace period but the pod Ready (renewals stopped): delete nothing",
			cluster: func() *cluster { return newCluster(3).renew(2, ago(20*time.Minute)).settle(ago(10 * time.Minute)) },
			actions: []string{}},
		{name: "9 lease stale past the grace period, pod NotReady but its etcd container Ready: delete nothing",
			cluster: func() *cluster {
				return newCluster(3).renew(2, ago(20*time.Minute)).pod(2, false, time.Hour).etcdContainerReady(2).settle(ago(10 * time.Minute))
			},
			actions: []string{}},
		{name: "9 two of 5 NotReady past the grace period: delete both pods",
			cluster: func() *cluster {
				return newCluster(5).renew(3, ago(20*time.Minute)).renew(4, ago(20*time.Minute)).
					pod(3, false, time.Hour).pod(4, false, time.Hour).settle(ago(10 * time.Minute))
			},
			actions: []string{"9 DeletePods etcd-main-3,etcd-main-4"}},
		{name: "9 replacement pod younger than the grace period: wait",
			cluster: func() *cluster {
				return newCluster(3).renew(2, ago(20*time.Minute)).settle(ago(10*time.Minute)).pod(2, false, time.Minute)
			},
			actions: []string{}},
		{name: "9 quorum rests on an Unknown member: delete nothing",
			cluster: func() *cluster {
				return newCluster(5).renew(3, ago(20*time.Minute)).renew(4, ago(20*time.Minute)).settle(ago(10*time.Minute)).renew(2, ago(90*time.Second))
			},
			actions: []string{"2 WriteStatus etcd-main-2"}},
		{name: "10 quorum lost with a backup: scale to 0 and bootstrap again",
			cluster: func() *cluster {
				return newCluster(3).withStore().lose(ago(20*time.Minute), ago(10*time.Minute), 1, 2)
			},
			actions:    []string{"10 StartQuorumRecovery etcd-main-1,etcd-main-2"},
			conditions: map[druidv1alpha1.ConditionType]druidv1alpha1.ConditionStatus{ready: isFalse}},
		{name: "10 quorum lost while joining an existing cluster: manual action, no volume is wiped",
			cluster: func() *cluster {
				c := newCluster(3).withStore().lose(ago(20*time.Minute), ago(10*time.Minute), 1, 2)
				c.etcd.Spec.Etcd.BootstrapWithExistingCluster = &druidv1alpha1.BootstrapWithExistingCluster{
					Members:         []druidv1alpha1.BootstrapExistingMember{{Name: "etcd-old-0", PeerURLs: []string{"http://etcd-old-0:2380"}}},
					ClientEndpoints: []string{"http://etcd-old-client:2379"},
				}
				return c
			},
			actions:    []string{"10 ManualInterventionRequired etcd-main-1,etcd-main-2"},
			conditions: map[druidv1alpha1.ConditionType]druidv1alpha1.ConditionStatus{ready: isFalse}},
		{name: "10 quorum lost without a backup store: manual action",
			cluster: func() *cluster {
				return newCluster(3).lose(ago(20*time.Minute), ago(10*time.Minute), 1, 2)
			},
			actions: []string{"10 ManualInterventionRequired etcd-main-1,etcd-main-2"}},
		{name: "10 quorum lost with BackupReady False: manual action",
			cluster: func() *cluster {
				return newCluster(3).withStore().backupFailing().lose(ago(20*time.Minute), ago(10*time.Minute), 1, 2)
			},
			actions: []string{"10 ManualInterventionRequired etcd-main-1,etcd-main-2"}},
		{name: "10 quorum lost, BackupReady False only since the loss (no snapshots without quorum): bootstrap again",
			cluster: func() *cluster {
				return newCluster(3).withStore().snapshotsAt(ago(2*time.Hour), ago(20*time.Minute+15*time.Second)).lose(ago(20*time.Minute), ago(10*time.Minute), 1, 2)
			},
			actions:    []string{"10 StartQuorumRecovery etcd-main-1,etcd-main-2"},
			conditions: map[druidv1alpha1.ConditionType]druidv1alpha1.ConditionStatus{ready: isFalse, backupReady: isFalse}},
		{name: "10 quorum lost, the backup was already stale when quorum was lost: manual action",
			cluster: func() *cluster {
				return newCluster(3).withStore().snapshotsAt(ago(2*time.Hour), ago(25*time.Minute)).lose(ago(20*time.Minute), ago(10*time.Minute), 1, 2)
			},
			actions: []string{"10 ManualInterventionRequired etcd-main-1,etcd-main-2"}},
		{name: "10 three of five lost one after the other, backup current at the last loss: bootstrap again",
			cluster: func() *cluster {
				return newCluster(5).withStore().snapshotsAt(ago(2*time.Hour), ago(20*time.Minute+15*time.Second)).
					lose(ago(40*time.Minute), ago(30*time.Minute), 3).lose(ago(20*time.Minute), ago(10*time.Minute), 1, 2)
			},
			actions: []string{"10 StartQuorumRecovery etcd-main-1,etcd-main-2,etcd-main-3"}},
		{name: "10 three of five lost, backups stopped while the remaining four were still quorate: manual action",
			cluster: func() *cluster {
				return newCluster(5).withStore().snapshotsAt(ago(2*time.Hour), ago(39*time.Minute)).
					lose(ago(40*time.Minute), ago(30*time.Minute), 3).lose(ago(20*time.Minute), ago(10*time.Minute), 1, 2)
			},
			actions: []string{"10 ManualInterventionRequired etcd-main-1,etcd-main-2,etcd-main-3"}},
		// Stale leases alone never start the recovery while a "lost" member may serve.
		{name: "10 leases stale but every pod Ready, backup current: suspect the lease renewal, no recovery",
			cluster: func() *cluster {
				return newCluster(3).withStore().snapshotsAt(ago(2*time.Hour), ago(time.Minute)).renew(1, ago(20*time.Minute)).renew(2, ago(20*time.Minute)).settle(ago(10 * time.Minute))
			},
			actions:    []string{"10 LeaseRenewalSuspected etcd-main-1,etcd-main-2"},
			conditions: map[druidv1alpha1.ConditionType]druidv1alpha1.ConditionStatus{ready: isFalse, backupReady: isTrue}},
		{name: "10 leases stale but every pod Ready, no backup store: suspect the lease renewal, not manual action",
			cluster: func() *cluster {
				return newCluster(3).renew(1, ago(20*time.Minute)).renew(2, ago(20*time.Minute)).settle(ago(10 * time.Minute))
			},
			actions: []string{"10 LeaseRenewalSuspected etcd-main-1,etcd-main-2"}},
		{name: "10 leases of the lost members stale, one of their pods Ready: no recovery",
			cluster: func() *cluster {
				return newCluster(3).withStore().snapshotsAt(ago(2*time.Hour), ago(20*time.Minute+15*time.Second)).lose(ago(20*time.Minute), ago(10*time.Minute), 1, 2).
					pod(2, true, time.Hour)
			},
			actions: []string{"10 LeaseRenewalSuspected etcd-main-1,etcd-main-2"}},
		{name: "10 a lost member's pod not Ready but its etcd container Ready (sidecar down): no recovery",
			cluster: func() *cluster {
				c := newCluster(3).withStore().lose(ago(20*time.Minute), ago(10*time.Minute), 1, 2)
				return c.etcdContainerReady(2)
			},
			actions: []string{"10 LeaseRenewalSuspected etcd-main-1,etcd-main-2"}},
		{name: "10 quorum lost, not yet past the grace period: members may still heal",
			cluster: func() *cluster {
				return newCluster(3).withStore().renew(1, ago(20*time.Minute)).renew(2, ago(20*time.Minute)).settle(ago(time.Minute))
			},
			actions: []string{}},
		{name: "10 recovery in progress is continued whatever the members say",
			cluster: func() *cluster {
				c := newCluster(3).withStore().renew(1, ago(20*time.Minute)).renew(2, ago(20*time.Minute)).settle(ago(10 * time.Minute)).stsReplicas(0)
				c.sts.Annotations[QuorumLossRecoveryAnnotation] = string(RecoveryDeletingVolumes)
				return c
			},
			actions: []string{"10 ContinueQuorumRecovery"}},
		{name: "11 scale-up 1 → 3 is left to the spec flow",
			cluster: func() *cluster {
				return newCluster(1).settle(now).specReplicas(3).emptyLease(1).emptyLease(2).settle(now)
			},
			actions: []string{"11 ScaleUpBySpecFlow"}},
		{name: "12 scale-down 5 → 3, StatefulSet at 3, leases 3 and 4 left",
			cluster: func() *cluster { return newCluster(5).settle(now).specReplicas(3).stsReplicas(3) },
			actions: []string{"12 CompleteScaleDown etcd-main-3,etcd-main-4"}},
		{name: "12 scale-down 5 → 3 waits for the spec flow to lower the StatefulSet",
			cluster: func() *cluster { return newCluster(5).settle(now).specReplicas(3) },
			actions: []string{}},
		{name: "13 superfluous member lease beyond spec.replicas",
			cluster: func() *cluster { return newCluster(3).settle(now).renew(3, ago(time.Second)) },
			actions: []string{"2 WriteStatus etcd-main-3", "13 RemoveSuperfluousMembers etcd-main-3"}},
		{name: "hibernated: no healing",
			cluster: func() *cluster { return newCluster(3).settle(now).specReplicas(0) },
			actions: []string{}},
	}
	runDecideRows(t, rows)
}

func TestDecideScaleDownCarriesTargetSize(t *testing.T) {
	actions := Decide(newCluster(5).settle(now).specReplicas(3).stsReplicas(3).input())
	NewWithT(t).Expect(actions).To(ConsistOf(HaveField("Replicas", int32(3))))
}

// The case 10 messages name the moment the backup was judged at, so that an operator can check it against
// the snapshots in the store.
func TestQuorumLossMessageNamesTheMomentTheBackupWasJudgedAt(t *testing.T) {
	g := NewWithT(t)
	lostAt := ago(20 * time.Minute).UTC().Format(time.RFC3339)
	current := Decide(newCluster(3).withStore().snapshotsAt(ago(2*time.Hour), ago(20*time.Minute+15*time.Second)).
		lose(ago(20*time.Minute), ago(10*time.Minute), 1, 2).input())
	g.Expect(current).To(HaveLen(1))
	g.Expect(current[0].Message).To(And(ContainSubstring("only because a cluster without quorum takes no snapshots"),
		ContainSubstring(lostAt), HaveSuffix("bootstrapping the cluster again from the backup")))
	stale := Decide(newCluster(3).withStore().snapshotsAt(ago(2*time.Hour), ago(25*time.Minute)).
		lose(ago(20*time.Minute), ago(10*time.Minute), 1, 2).input())
	g.Expect(stale).To(HaveLen(1))
	g.Expect(stale[0].Message).To(And(ContainSubstring("already not True when the cluster last had quorum ("+lostAt),
		ContainSubstring("older than 1m0s"), HaveSuffix("manual action needed")))
}
