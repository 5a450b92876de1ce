package etcd

import (
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/heal"
)

func metricsScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := druidv1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestEtcdCollector: the series of each Etcd in the cache, from its status, spec and snapshot leases; a
// deleted Etcd leaves no series (and its recovery counter is dropped).
func TestEtcdCollector(t *testing.T) {
	g := NewWithT(t)
	full := time.Unix(1_700_000_000, 0)
	delta := full.Add(90 * time.Second)
	main := &druidv1alpha1.Etcd{
		ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: "shoot--a"},
		Spec: druidv1alpha1.EtcdSpec{Replicas: 3, Backup: druidv1alpha1.BackupSpec{
			Store: &druidv1alpha1.StoreSpec{}, DeltaSnapshotPeriod: &metav1.Duration{Duration: time.Minute}}},
		Status: druidv1alpha1.EtcdStatus{
			Conditions: []druidv1alpha1.Condition{
				{Type: druidv1alpha1.ConditionTypeReady, Status: druidv1alpha1.ConditionTrue, Reason: druidv1alpha1.ReasonQuorate},
				{Type: druidv1alpha1.ConditionTypeBackupReady, Status: druidv1alpha1.ConditionFalse, Reason: druidv1alpha1.ReasonBackupFailed},
			},
			Members: []druidv1alpha1.EtcdMemberStatus{
				{Name: "etcd-main-0", Status: druidv1alpha1.EtcdMemberStatusReady},
				{Name: "etcd-main-1", Status: druidv1alpha1.EtcdMemberStatusReady},
				{Name: "etcd-main-2", Status: druidv1alpha1.EtcdMemberStatusNotReady},
			},
		},
	}
	// No backup store: no snapshot series and no delta period.
	events := &druidv1alpha1.Etcd{
		ObjectMeta: metav1.ObjectMeta{Name: "etcd-events", Namespace: "shoot--a"},
		Spec:       druidv1alpha1.EtcdSpec{Replicas: 1},
		Status: druidv1alpha1.EtcdStatus{Conditions: []druidv1alpha1.Condition{
			{Type: heal.ConditionTypeQuorumLossRecovery, Status: druidv1alpha1.ConditionFalse, Reason: heal.ReasonManualInterventionRequired},
		}},
	}
	lease := func(name string, at time.Time, holder string) *coordinationv1.Lease {
		return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shoot--a"},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(holder), RenewTime: &metav1.MicroTime{Time: at}}}
	}
	// The cluster size is druid's record on the StatefulSet; etcd-events' StatefulSet has none: no series.
	mainSts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: "shoot--a",
		Annotations: map[string]string{druidv1alpha1.ClusterSizeAnnotation: "3"}}}
	eventsSts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "etcd-events", Namespace: "shoot--a"}}
	c := fake.NewClientBuilder().WithScheme(metricsScheme(t)).WithObjects(main, events, mainSts, eventsSts,
		lease("etcd-main-full-snap", full, "100"), lease("etcd-main-delta-snap", delta, "120"),
		// A lease that records no snapshot yet (no holder) gives no series.
		lease("etcd-events-full-snap", full, "")).Build()

	col := &etcdCollector{reader: c, recoveries: map[types.NamespacedName]float64{}}
	col.recoveryStarted(types.NamespacedName{Namespace: "shoot--a", Name: "etcd-main"})
	col.recoveryStarted(types.NamespacedName{Namespace: "shoot--a", Name: "etcd-main"})

	g.Expect(testutil.CollectAndCompare(col, strings.NewReader(`
# HELP etcddruid_etcd_cluster_size Members the cluster was last bootstrapped or scaled to (the StatefulSet's annotation druid.gardener.cloud/cluster-size).
# TYPE etcddruid_etcd_cluster_size gauge
etcddruid_etcd_cluster_size{name="etcd-main",namespace="shoot--a"} 3
# HELP etcddruid_etcd_condition Condition of an Etcd: 1 for its current status and reason (condition Ready, AllMembersReady, BackupReady, DataVolumesReady, QuorumLossRecovery, …).
# TYPE etcddruid_etcd_condition gauge
etcddruid_etcd_condition{condition="BackupReady",name="etcd-main",namespace="shoot--a",reason="BackupFailed",status="False"} 1
etcddruid_etcd_condition{condition="QuorumLossRecovery",name="etcd-events",namespace="shoot--a",reason="ManualInterventionRequired",status="False"} 1
etcddruid_etcd_condition{condition="Ready",name="etcd-main",namespace="shoot--a",reason="Quorate",status="True"} 1
# HELP etcddruid_etcd_delta_snapshot_period_seconds Delta snapshot period of an Etcd with a backup store (spec.backup.deltaSnapshotPeriod or the sidecar's default).
# TYPE etcddruid_etcd_delta_snapshot_period_seconds gauge
etcddruid_etcd_delta_snapshot_period_seconds{name="etcd-main",namespace="shoot--a"} 60
# HELP etcddruid_etcd_members_ready Members of an Etcd whose status (from their member lease) is Ready.
# TYPE etcddruid_etcd_members_ready gauge
etcddruid_etcd_members_ready{name="etcd-events",namespace="shoot--a"} 0
etcddruid_etcd_members_ready{name="etcd-main",namespace="shoot--a"} 2
# HELP etcddruid_etcd_members_total Members of an Etcd in its status.
# TYPE etcddruid_etcd_members_total gauge
etcddruid_etcd_members_total{name="etcd-events",namespace="shoot--a"} 0
etcddruid_etcd_members_total{name="etcd-main",namespace="shoot--a"} 3
# HELP etcddruid_etcd_quorum_loss_recoveries_total Quorum-loss recoveries this druid process started for an Etcd (the heal decision table's case 10: scaled to 0 to bootstrap again from the backup).
# TYPE etcddruid_etcd_quorum_loss_recoveries_total counter
etcddruid_etcd_quorum_loss_recoveries_total{name="etcd-events",namespace="shoot--a"} 0
etcddruid_etcd_quorum_loss_recoveries_total{name="etcd-main",namespace="shoot--a"} 2
# HELP etcddruid_etcd_replicas Members an Etcd asks for (spec.replicas).
# TYPE etcddruid_etcd_replicas gauge
etcddruid_etcd_replicas{name="etcd-events",namespace="shoot--a"} 1
etcddruid_etcd_replicas{name="etcd-main",namespace="shoot--a"} 3
# HELP etcddruid_etcd_snapshot_latest_timestamp_seconds Unix time of the latest snapshot the backup leader recorded in the snapshot lease, by kind (full, delta); the age is time() minus this.
# TYPE etcddruid_etcd_snapshot_latest_timestamp_seconds gauge
etcddruid_etcd_snapshot_latest_timestamp_seconds{kind="delta",name="etcd-main",namespace="shoot--a"} 1.70000009e+09
etcddruid_etcd_snapshot_latest_timestamp_seconds{kind="full",name="etcd-main",namespace="shoot--a"} 1.7e+09
`))).To(Succeed())

	// The Etcd is deleted: its series and its counter go.
	g.Expect(c.Delete(t.Context(), main)).To(Succeed())
	g.Expect(testutil.CollectAndCount(col, "etcddruid_etcd_replicas", "etcddruid_etcd_quorum_loss_recoveries_total")).To(Equal(2))
	g.Expect(col.recoveries).To(BeEmpty())
	g.Expect(testutil.CollectAndCount(col, "etcddruid_etcd_snapshot_latest_timestamp_seconds")).To(BeZero())
}
