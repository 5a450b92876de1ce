package health

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
)

const (
	// DefaultFullSnapshotInterval is assumed when spec.backup.fullSnapshotSchedule is unset: the sidecar
	// then takes one full snapshot a day.
	DefaultFullSnapshotInterval = 24 * time.Hour
	// DefaultDeltaSnapshotPeriod is the sidecar's delta snapshot period when spec.backup.deltaSnapshotPeriod
	// is unset.
	DefaultDeltaSnapshotPeriod = 20 * time.Second
	// DeltaSnapshotStalenessFactor: the latest snapshot (delta or full) may be this many delta periods old
	// before BackupReady turns False, so that one slow or skipped upload does not flap the condition.
	DeltaSnapshotStalenessFactor = 3
)

// SnapshotLeases are the full and delta snapshot leases of an Etcd; either may be nil (not created yet).
type SnapshotLeases struct {
	Full  *coordinationv1.Lease
	Delta *coordinationv1.Lease
}

// snapshotTime is the time of the snapshot a lease records, or false when it records none yet.
func snapshotTime(lease *coordinationv1.Lease) (time.Time, bool) {
	if lease == nil || lease.Spec.RenewTime == nil || lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
		return time.Time{}, false
	}
	return lease.Spec.RenewTime.Time, true
}

// SnapshotFromLease is the snapshot a snapshot lease records (status.lastFullSnapshot from the full
// lease, status.lastDeltaSnapshot from the delta lease), or nil when it records none: no lease, no renewal
// yet, or a holderIdentity that is not a decimal revision. The name comes from the annotation
// etcdpod.SnapshotNameAnnotation when the sidecar wrote one for that revision. The time is cut to whole
// seconds, the precision metav1.Time keeps on the wire, so the same lease always computes a status equal
// to the stored one.
func SnapshotFromLease(lease *coordinationv1.Lease) *druidv1alpha1.SnapshotStatus {
	at, ok := snapshotTime(lease)
	if !ok {
		return nil
	}
	revision, err := strconv.ParseInt(*lease.Spec.HolderIdentity, 10, 64)
	if err != nil || revision < 0 {
		return nil
	}
	snap := &druidv1alpha1.SnapshotStatus{EndRevision: revision, Timestamp: metav1.NewTime(at.Truncate(time.Second))}
	if name := lease.Annotations[etcdpod.SnapshotNameAnnotation]; name != "" && nameHasRevision(name, revision) {
		snap.Name = &name
	}
	return snap
}

// nameHasRevision tells whether a snapshot name (`Full-<start>-<last>-<unix>…`, `Incr-<start>-<last>-<unix>…`)
// ends at revision: a sidecar that does not write the annotation (an upstream one, after a rollback) renews
// the lease with a newer revision and leaves an older snapshot's name behind, which must not be shown.
func nameHasRevision(name string, revision int64) bool {
	parts := strings.SplitN(name, "-", 4)
	if len(parts) < 4 {
		return false
	}
	last, err := strconv.ParseInt(parts[2], 10, 64)
	return err == nil && last == revision
}

// BackupReadyCondition judges the backups from the snapshot leases:
//   - Unknown until the first full snapshot was recorded (nothing to judge yet);
//   - False when the last full snapshot is older than the next scheduled one plus a grace of
//     spec.backup.etcdSnapshotTimeout (the time one snapshot may take);
//   - False when the latest snapshot of any kind is older than DeltaSnapshotStalenessFactor delta periods;
//   - True otherwise.
//
// The spec must be defaulted (druidv1alpha1.SetDefaults). An unparsable schedule is reported as Unknown.
func BackupReadyCondition(backup druidv1alpha1.BackupSpec, leases SnapshotLeases, now time.Time) druidv1alpha1.Condition {
	t := druidv1alpha1.ConditionTypeBackupReady
	fullAt, ok := snapshotTime(leases.Full)
	if !ok {
		return condition(t, druidv1alpha1.ConditionUnknown, druidv1alpha1.ReasonUnknown, "no full snapshot has been recorded yet")
	}
	nextFull, err := nextFullSnapshot(backup.FullSnapshotSchedule, fullAt)
	if err != nil {
		return condition(t, druidv1alpha1.ConditionUnknown, druidv1alpha1.ReasonUnknown, err.Error())
	}
	grace := druidv1alpha1.DefaultEtcdSnapshotTimeout
	if backup.EtcdSnapshotTimeout != nil {
		grace = backup.EtcdSnapshotTimeout.Duration
	}
	if now.After(nextFull.Add(grace)) {
		return condition(t, druidv1alpha1.ConditionFalse, druidv1alpha1.ReasonBackupFailed, fmt.Sprintf(
			"last full snapshot at %s (revision %s); the next one was due at %s", fullAt.UTC().Format(time.RFC3339),
			*leases.Full.Spec.HolderIdentity, nextFull.UTC().Format(time.RFC3339)))
	}
	latest := fullAt
	if deltaAt, ok := snapshotTime(leases.Delta); ok && deltaAt.After(latest) {
		latest = deltaAt
	}
	period := DefaultDeltaSnapshotPeriod
	if backup.DeltaSnapshotPeriod != nil && backup.DeltaSnapshotPeriod.Duration > 0 {
		period = backup.DeltaSnapshotPeriod.Duration
	}
	if limit := DeltaSnapshotStalenessFactor * period; now.Sub(latest) > limit {
		return condition(t, druidv1alpha1.ConditionFalse, druidv1alpha1.ReasonBackupFailed, fmt.Sprintf(
			"latest snapshot at %s is older than %s (%d delta snapshot periods)", latest.UTC().Format(time.RFC3339), limit, DeltaSnapshotStalenessFactor))
	}
	return condition(t, druidv1alpha1.ConditionTrue, druidv1alpha1.ReasonBackupSucceeded, fmt.Sprintf(
		"full snapshot at %s, latest snapshot at %s", fullAt.UTC().Format(time.RFC3339), latest.UTC().Format(time.RFC3339)))
}

// nextFullSnapshot is when the full snapshot after one taken at last is due. Comparing against the next
// activation rather than a fixed period handles irregular schedules (e.g. twice a day at odd hours).
func nextFullSnapshot(schedule *string, last time.Time) (time.Time, error) {
	if schedule == nil || *schedule == "" {
		return last.Add(DefaultFullSnapshotInterval), nil
	}
	s, err := cron.ParseStandard(*schedule)
	if err != nil {
		return time.Time{}, fmt.Errorf("cannot parse spec.backup.fullSnapshotSchedule %q: %w", *schedule, err)
	}
	return s.Next(last), nil
}
