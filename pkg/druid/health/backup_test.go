package health

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

func TestBackupReadyCondition(t *testing.T) {
	snap := func(name, revision string, ago time.Duration) *coordinationv1.Lease {
		l := lease(name, revision, ago)
		return &l
	}
	hourly := druidv1alpha1.BackupSpec{FullSnapshotSchedule: ptr.To("0 * * * *"), DeltaSnapshotPeriod: &metav1.Duration{Duration: time.Minute}}
	unset := druidv1alpha1.BackupSpec{}
	for name, tc := range map[string]struct {
		backup     druidv1alpha1.BackupSpec
		leases     SnapshotLeases
		wantStatus druidv1alpha1.ConditionStatus
		wantReason string
	}{
		"no leases":                       {backup: hourly, wantStatus: "Unknown", wantReason: "Unknown"},
		"leases created, never renewed":   {backup: hourly, leases: SnapshotLeases{Full: snap("f", "", -1), Delta: snap("d", "", -1)}, wantStatus: "Unknown", wantReason: "Unknown"},
		"only delta so far":               {backup: hourly, leases: SnapshotLeases{Delta: snap("d", "120", time.Second)}, wantStatus: "Unknown", wantReason: "Unknown"},
		"fresh full and delta":            {backup: hourly, leases: SnapshotLeases{Full: snap("f", "100", 30*time.Minute), Delta: snap("d", "120", 30*time.Second)}, wantStatus: "True", wantReason: "BackupSucceeded"},
		"fresh full, no delta yet":        {backup: hourly, leases: SnapshotLeases{Full: snap("f", "100", 30*time.Second), Delta: snap("d", "", -1)}, wantStatus: "True", wantReason: "BackupSucceeded"},
		"stale delta":                     {backup: hourly, leases: SnapshotLeases{Full: snap("f", "100", 30*time.Minute), Delta: snap("d", "120", 4*time.Minute)}, wantStatus: "False", wantReason: "BackupFailed"},
		"full missed its schedule":        {backup: hourly, leases: SnapshotLeases{Full: snap("f", "100", 2*time.Hour), Delta: snap("d", "120", 10*time.Second)}, wantStatus: "False", wantReason: "BackupFailed"},
		"next full due now, within grace": {backup: hourly, leases: SnapshotLeases{Full: snap("f", "100", 60*time.Minute), Delta: snap("d", "120", 10*time.Second)}, wantStatus: "True", wantReason: "BackupSucceeded"},
		"next full overdue beyond grace":  {backup: hourly, leases: SnapshotLeases{Full: snap("f", "100", 70*time.Minute), Delta: snap("d", "120", 10*time.Second)}, wantStatus: "False", wantReason: "BackupFailed"},
		"default daily, full 23h old":     {backup: unset, leases: SnapshotLeases{Full: snap("f", "100", 23*time.Hour), Delta: snap("d", "120", 10*time.Second)}, wantStatus: "True", wantReason: "BackupSucceeded"},
		"default daily, full 25h old":     {backup: unset, leases: SnapshotLeases{Full: snap("f", "100", 25*time.Hour), Delta: snap("d", "120", 10*time.Second)}, wantStatus: "False", wantReason: "BackupFailed"},
		"default delta period, 61s stale": {backup: unset, leases: SnapshotLeases{Full: snap("f", "100", time.Hour), Delta: snap("d", "120", 61*time.Second)}, wantStatus: "False", wantReason: "BackupFailed"},
		"unparsable schedule":             {backup: druidv1alpha1.BackupSpec{FullSnapshotSchedule: ptr.To("every day")}, leases: SnapshotLeases{Full: snap("f", "100", time.Minute)}, wantStatus: "Unknown", wantReason: "Unknown"},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			c := BackupReadyCondition(tc.backup, tc.leases, now)
			g.Expect(c.Type).To(Equal(druidv1alpha1.ConditionTypeBackupReady))
			g.Expect(c.Status).To(Equal(tc.wantStatus), c.Message)
			g.Expect(c.Reason).To(Equal(tc.wantReason))
		})
	}
}

func TestSnapshotFromLease(t *testing.T) {
	withNanos := lease("f", "4711", 30*time.Second)
	withNanos.Spec.RenewTime = &metav1.MicroTime{Time: now.Add(-30*time.Second + 123456*time.Microsecond)}
	named := lease("d", "120", 10*time.Second)
	named.Annotations = map[string]string{"snapshot.etcd.gardener.cloud/name": "Incr-00000101-00000120-1740830390.gz"}
	stale := lease("d", "130", 10*time.Second) // renewed by a sidecar that writes no name
	stale.Annotations = named.Annotations
	odd := lease("d", "120", 10*time.Second)
	odd.Annotations = map[string]string{"snapshot.etcd.gardener.cloud/name": "latest"}
	for name, tc := range map[string]struct {
		lease *coordinationv1.Lease
		want  *druidv1alpha1.SnapshotStatus
	}{
		"no lease":                  {lease: nil, want: nil},
		"created, never renewed":    {lease: ptr.To(lease("f", "", -1)), want: nil},
		"holder is not a revision":  {lease: ptr.To(lease("f", "abc", time.Second)), want: nil},
		"negative revision":         {lease: ptr.To(lease("f", "-1", time.Second)), want: nil},
		"revision and renewal time": {lease: ptr.To(lease("f", "1234567890123", time.Minute)), want: &druidv1alpha1.SnapshotStatus{EndRevision: 1234567890123, Timestamp: metav1.NewTime(now.Add(-time.Minute))}},
		"time cut to whole seconds": {lease: &withNanos, want: &druidv1alpha1.SnapshotStatus{EndRevision: 4711, Timestamp: metav1.NewTime(now.Add(-30 * time.Second))}},
		"name from the annotation":  {lease: &named, want: &druidv1alpha1.SnapshotStatus{Name: ptr.To("Incr-00000101-00000120-1740830390.gz"), EndRevision: 120, Timestamp: metav1.NewTime(now.Add(-10 * time.Second))}},
		"name of another revision":  {lease: &stale, want: &druidv1alpha1.SnapshotStatus{EndRevision: 130, Timestamp: metav1.NewTime(now.Add(-10 * time.Second))}},
		"name that is no snapshot":  {lease: &odd, want: &druidv1alpha1.SnapshotStatus{EndRevision: 120, Timestamp: metav1.NewTime(now.Add(-10 * time.Second))}},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(SnapshotFromLease(tc.lease)).To(Equal(tc.want))
		})
	}
}
