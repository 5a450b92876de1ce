package health

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/fullsnapshot"
)

func rolledOutStatefulSet(replicas int32) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Generation: 1},
		Spec:       appsv1.StatefulSetSpec{Replicas: ptr.To(replicas)},
		Status: appsv1.StatefulSetStatus{ObservedGeneration: 1, Replicas: replicas, ReadyReplicas: replicas, CurrentReplicas: replicas,
			UpdatedReplicas: replicas, CurrentRevision: "r1", UpdateRevision: "r1"},
	}
}

func threeHealthyMembers() ([]coordinationv1.Lease, map[string]*corev1.Pod) {
	var leases []coordinationv1.Lease
	pods := map[string]*corev1.Pod{}
	for i, role := range []string{"Leader", "Member", "Member"} {
		name := druidv1alpha1.PodName(testEtcd(3), i)
		l := lease(name, "a"+string(rune('0'+i))+":c:"+role, 5*time.Second)
		l.Annotations = map[string]string{druidv1alpha1.TLSEnabledAnnotation: "true"}
		leases = append(leases, l)
		pods[name] = pod(name, true)
	}
	return leases, pods
}

func conditionsByType(s druidv1alpha1.EtcdStatus) map[druidv1alpha1.ConditionType]string {
	out := map[druidv1alpha1.ConditionType]string{}
	for _, c := range s.Conditions {
		out[c.Type] = string(c.Status) + "/" + c.Reason
	}
	return out
}

func TestComputeStatusHealthy(t *testing.T) {
	g := NewWithT(t)
	etcd := testEtcd(3)
	etcd.Status.LastErrors = []druidv1alpha1.LastError{{Code: "ERR_X"}}
	etcd.Status.Conditions = []druidv1alpha1.Condition{{Type: "SecretsReady", Status: "True"}}
	leases, pods := threeHealthyMembers()
	s := ComputeStatus(Observed{Etcd: etcd, StatefulSet: rolledOutStatefulSet(3), Pods: pods, MemberLeases: leases}, th, now)
	g.Expect(conditionsByType(s)).To(Equal(map[druidv1alpha1.ConditionType]string{
		"SecretsReady":      "True/",
		"Ready":             "True/Quorate",
		"AllMembersReady":   "True/AllMembersReady",
		"AllMembersUpdated": "True/AllMembersUpdated",
		"DataVolumesReady":  "True/NoWarningsFoundForDataVolumes",
		"ClusterIDMismatch": "False/NoClusterIDMismatchDetected",
	}))
	g.Expect(s.Members).To(HaveLen(3))
	g.Expect(NextClusterSize(Observed{Etcd: etcd}, s)).To(Equal(int32(3)))
	g.Expect(s.PeerUrlTLSEnabled).To(Equal(ptr.To(true)))
	g.Expect(s.Ready).To(Equal(ptr.To(true)))
	g.Expect(s.ReadyReplicas).To(Equal(int32(3)))
	g.Expect(s.Selector).To(Equal(ptr.To("app.kubernetes.io/managed-by=etcd-druid,app.kubernetes.io/part-of=etcd-main")))
	g.Expect(s.Etcd.Name).To(Equal("etcd-main"))
	g.Expect(s.Etcd.Kind).To(Equal("StatefulSet"))
	g.Expect(s.LastErrors).To(HaveLen(1), "spec-flow fields are kept")
	g.Expect(etcd.Status.Members).To(BeEmpty(), "the input is not modified")
}

func TestComputeStatusHibernated(t *testing.T) {
	g := NewWithT(t)
	etcd := testEtcd(0)
	etcd.Spec.Backup.Store = &druidv1alpha1.StoreSpec{Prefix: "p"}
	s := ComputeStatus(Observed{Etcd: etcd, StatefulSet: rolledOutStatefulSet(0)}, th, now)
	for _, c := range s.Conditions {
		g.Expect(c.Reason).To(Equal("NotChecked"), string(c.Type))
	}
	g.Expect(conditionsByType(s)).To(HaveLen(6), "Ready, AllMembersReady, AllMembersUpdated, DataVolumesReady, ClusterIDMismatch, BackupReady")
	for _, c := range s.Conditions {
		g.Expect(c.Status).To(Equal(druidv1alpha1.ConditionUnknown), "new conditions are Unknown: %s", c.Type)
	}
}

// Hibernating keeps each condition's status as upstream druid does; only the reason says NotChecked.
func TestComputeStatusHibernatedKeepsStatuses(t *testing.T) {
	g := NewWithT(t)
	etcd := testEtcd(0)
	etcd.Spec.Backup.Store = &druidv1alpha1.StoreSpec{Prefix: "p"}
	before := now.Add(-time.Hour)
	etcd.Status.Conditions = []druidv1alpha1.Condition{
		{Type: druidv1alpha1.ConditionTypeReady, Status: druidv1alpha1.ConditionTrue, Reason: "Quorate", LastTransitionTime: metav1.NewTime(before)},
		{Type: druidv1alpha1.ConditionTypeBackupReady, Status: druidv1alpha1.ConditionFalse, Reason: "BackupFailed", LastTransitionTime: metav1.NewTime(before)},
	}
	s := ComputeStatus(Observed{Etcd: etcd, StatefulSet: rolledOutStatefulSet(0)}, th, now)
	g.Expect(conditionsByType(s)).To(Equal(map[druidv1alpha1.ConditionType]string{
		"Ready":             "True/NotChecked",
		"BackupReady":       "False/NotChecked",
		"AllMembersReady":   "Unknown/NotChecked",
		"AllMembersUpdated": "Unknown/NotChecked",
		"DataVolumesReady":  "Unknown/NotChecked",
		"ClusterIDMismatch": "Unknown/NotChecked",
	}))
	ready := druidv1alpha1.FindCondition(s.Conditions, druidv1alpha1.ConditionTypeReady)
	g.Expect(ready.LastTransitionTime.Time).To(BeTemporally("==", before), "the status did not change")
	g.Expect(ready.LastUpdateTime.Time).To(BeTemporally("==", now))
}

func TestComputeStatusBackupReadyOnlyWithStore(t *testing.T) {
	g := NewWithT(t)
	etcd := testEtcd(3)
	etcd.Status.Conditions = []druidv1alpha1.Condition{{Type: druidv1alpha1.ConditionTypeBackupReady, Status: "True"}}
	s := ComputeStatus(Observed{Etcd: etcd}, th, now)
	g.Expect(conditionsByType(s)).NotTo(HaveKey(druidv1alpha1.ConditionTypeBackupReady))

	etcd.Spec.Backup.Store = &druidv1alpha1.StoreSpec{Prefix: "p"}
	s = ComputeStatus(Observed{Etcd: etcd}, th, now)
	g.Expect(conditionsByType(s)).To(HaveKeyWithValue(druidv1alpha1.ConditionTypeBackupReady, "Unknown/Unknown"))
	g.Expect(conditionsByType(s)).To(HaveKeyWithValue(druidv1alpha1.ConditionTypeAllMembersUpdated, "Unknown/StatefulSetNotFound"))
	g.Expect(s.Ready).To(Equal(ptr.To(false)))
	g.Expect(s.Etcd).To(BeNil())
}

// The last snapshots come from the snapshot leases whenever there is a store (hibernated too: the backup
// stays), and are nil without one.
func TestLastSnapshots(t *testing.T) {
	g := NewWithT(t)
	full, delta := lease("etcd-main-full-snap", "100", time.Hour), lease("etcd-main-delta-snap", "120", 10*time.Second)
	observed := func(replicas int32, store bool) Observed {
		etcd := testEtcd(replicas)
		if store {
			etcd.Spec.Backup.Store = &druidv1alpha1.StoreSpec{Prefix: "p"}
		}
		return Observed{Etcd: etcd, SnapshotLeases: SnapshotLeases{Full: &full, Delta: &delta}}
	}
	wantFull := &druidv1alpha1.SnapshotStatus{EndRevision: 100, Timestamp: metav1.NewTime(now.Add(-time.Hour))}
	wantDelta := &druidv1alpha1.SnapshotStatus{EndRevision: 120, Timestamp: metav1.NewTime(now.Add(-10 * time.Second))}
	for _, replicas := range []int32{3, 0} {
		gotFull, gotDelta := LastSnapshots(observed(replicas, true))
		g.Expect(gotFull).To(Equal(wantFull), "replicas %d", replicas)
		g.Expect(gotDelta).To(Equal(wantDelta), "replicas %d", replicas)

		gotFull, gotDelta = LastSnapshots(observed(replicas, false))
		g.Expect(gotFull).To(BeNil(), "replicas %d, no store", replicas)
		g.Expect(gotDelta).To(BeNil(), "replicas %d, no store", replicas)
	}

	// A lease that records nothing (recreated empty) gives no snapshot.
	o := observed(3, true)
	o.SnapshotLeases.Full = ptr.To(lease("etcd-main-full-snap", "", -1))
	gotFull, _ := LastSnapshots(o)
	g.Expect(gotFull).To(BeNil())
}

// The full snapshot druid requested before an update (recorded on the StatefulSet) is shown while the
// full snapshot lease lags behind it; a newer lease wins again.
func TestLastFullSnapshotFromTheRecord(t *testing.T) {
	g := NewWithT(t)
	takenAt := now.Add(-time.Minute).Truncate(time.Second)
	record := fullsnapshot.Record{For: "update", Revision: 150, Name: "Full-00000000-00000150-1.gz", TakenAt: metav1.NewTime(takenAt)}
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{fullsnapshot.BeforeUpdateAnnotation: record.Encode()}}}
	etcd := testEtcd(0)
	etcd.Spec.Backup.Store = &druidv1alpha1.StoreSpec{Prefix: "p"}
	for revision, want := range map[string]int64{"100": 150, "150": 150, "200": 200} {
		full := lease("etcd-main-full-snap", revision, time.Hour)
		got, _ := LastSnapshots(Observed{Etcd: etcd, StatefulSet: sts, SnapshotLeases: SnapshotLeases{Full: &full}})
		g.Expect(got).NotTo(BeNil())
		g.Expect(got.EndRevision).To(Equal(want), "lease at %s", revision)
	}
	got, _ := LastSnapshots(Observed{Etcd: etcd, StatefulSet: sts})
	g.Expect(got).NotTo(BeNil(), "no lease yet")
	g.Expect(got.EndRevision).To(Equal(int64(150)))
	g.Expect(got.Name).To(Equal(ptr.To("Full-00000000-00000150-1.gz")))
	g.Expect(got.Timestamp.Time).To(BeTemporally("==", takenAt))
}

func TestClusterSize(t *testing.T) {
	leases, pods := threeHealthyMembers()
	for name, tc := range map[string]struct {
		previous int32
		replicas int32
		leases   []coordinationv1.Lease
		want     int32
		ready    string
	}{
		"before bootstrap: spec.replicas":        {replicas: 3, want: 3, ready: "Unknown/NoMembersInStatus"},
		"quorate: number of members":             {replicas: 3, leases: leases, want: 3, ready: "True/Quorate"},
		"scale-up 1→3, only member 0 joined":     {previous: 1, replicas: 3, leases: leases[:1], want: 1, ready: "True/Quorate"},
		"scale-up 1→3, all joined":               {previous: 1, replicas: 3, leases: leases, want: 3, ready: "True/Quorate"},
		"creation of 3, one joined: not quorate": {replicas: 3, leases: leases[:1], want: 3, ready: "False/QuorumLost"},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			etcd := testEtcd(tc.replicas)
			o := Observed{Etcd: etcd, Pods: pods, MemberLeases: tc.leases, ClusterSize: tc.previous}
			s := ComputeStatus(o, th, now)
			g.Expect(NextClusterSize(o, s)).To(Equal(tc.want))
			g.Expect(conditionsByType(s)).To(HaveKeyWithValue(druidv1alpha1.ConditionTypeReady, tc.ready))
		})
	}
}

// After a scale-in to one that shrank the StatefulSet before the members left (an older druid),
// the heal flow recorded clusterSize 1 and deleted the dropped members' leases; the survivor renews its
// lease without a leader (role Member). Its pod is Ready and its lease fresh, yet it must not be Ready.
func TestComputeStatusLeaderlessSurvivorOfAScaleInIsNotReady(t *testing.T) {
	g := NewWithT(t)
	etcd := testEtcd(1)
	name := druidv1alpha1.PodName(etcd, 0)
	leases := []coordinationv1.Lease{lease(name, "a0:c:Member", 5*time.Second)}
	o := Observed{Etcd: etcd, StatefulSet: rolledOutStatefulSet(1), Pods: map[string]*corev1.Pod{name: pod(name, true)}, MemberLeases: leases, ClusterSize: 1}
	s := ComputeStatus(o, th, now)
	g.Expect(conditionsByType(s)).To(HaveKeyWithValue(druidv1alpha1.ConditionTypeReady, "False/QuorumLost"))
	g.Expect(druidv1alpha1.FindCondition(s.Conditions, druidv1alpha1.ConditionTypeReady).Message).To(ContainSubstring("reports no leader"))
	g.Expect(NextClusterSize(o, s)).To(Equal(int32(1)))

	// Once it leads its one-member cluster, it is Ready.
	leases[0] = lease(name, "a0:c:Leader", 5*time.Second)
	s = ComputeStatus(Observed{Etcd: etcd, StatefulSet: rolledOutStatefulSet(1), Pods: map[string]*corev1.Pod{name: pod(name, true)}, MemberLeases: leases}, th, now)
	g.Expect(conditionsByType(s)).To(HaveKeyWithValue(druidv1alpha1.ConditionTypeReady, "True/Quorate"))
}
