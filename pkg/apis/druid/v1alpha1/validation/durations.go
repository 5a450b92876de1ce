package validation

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// durationRange bounds one duration field; max 0 means no upper bound. Each bound says why in godoc below.
type durationRange struct {
	min, max time.Duration
}

// The ranges of the Etcd's durations. Every default and every value Gardener writes is inside them.
var (
	// HeartbeatRange bounds spec.etcd.heartbeatDuration, the period of the sidecar's member-lease renewal.
	// Below 1s each member writes its Lease to the apiserver many times a second. Above 30s a member whose
	// sidecar renews on time still looks unrenewed to druid, whose default grace period is 1m: members
	// turn Unknown and NotReady between renewals, and a healthy cluster looks like one that lost quorum.
	HeartbeatRange = durationRange{min: time.Second, max: 30 * time.Second}
	// ReelectionRange bounds spec.backup.leaderElection.reelectionPeriod, how often the sidecar asks its
	// member whether it leads. Zero or negative stops the sidecar at start (every member crash-loops);
	// below 1s it polls etcd without pause; above 1m a new leader's sidecar takes no snapshots for that
	// long after a leader change.
	ReelectionRange = durationRange{min: time.Second, max: time.Minute}
	// LeaderElectionTimeoutRange bounds spec.backup.leaderElection.etcdConnectionTimeout, the timeout of
	// those calls, for the same reasons.
	LeaderElectionTimeoutRange = durationRange{min: time.Second, max: time.Minute}
	// DefragTimeoutRange and SnapshotTimeoutRange bound spec.etcd.etcdDefragTimeout and
	// spec.backup.etcdSnapshotTimeout (default 15m). Below 1m a defragmentation or full snapshot of a
	// database of some Gi is cut off every time (no backup, no defragmentation); above a day a hung one
	// blocks the next runs of its schedule for longer than the schedule's period.
	DefragTimeoutRange   = durationRange{min: time.Minute, max: 24 * time.Hour}
	SnapshotTimeoutRange = durationRange{min: time.Minute, max: 24 * time.Hour}
	// GarbageCollectionRange bounds spec.backup.garbageCollectionPeriod: each run lists the whole prefix in
	// the store, so below 1m (the sidecar's default) it loads the store without need. Gardener writes 12h.
	GarbageCollectionRange = durationRange{min: time.Minute}
	// DeltaSnapshotRange bounds a non-zero spec.backup.deltaSnapshotPeriod: the sidecar refuses to start
	// with a period between 0 and 1s (0 turns delta snapshots off, with a warning). Its upper bound is the
	// garbage collection period (validateBackupSpec).
	DeltaSnapshotRange = durationRange{min: time.Second}
)

// validateDurations checks the Etcd's durations against their ranges.
func validateDurations(spec *druidv1alpha1.EtcdSpec, fld *field.Path) field.ErrorList {
	etcd, backup := fld.Child("etcd"), fld.Child("backup")
	var errs field.ErrorList
	errs = append(errs, HeartbeatRange.validate(spec.Etcd.HeartbeatDuration, etcd.Child("heartbeatDuration"))...)
	errs = append(errs, DefragTimeoutRange.validate(spec.Etcd.EtcdDefragTimeout, etcd.Child("etcdDefragTimeout"))...)
	errs = append(errs, SnapshotTimeoutRange.validate(spec.Backup.EtcdSnapshotTimeout, backup.Child("etcdSnapshotTimeout"))...)
	errs = append(errs, GarbageCollectionRange.validate(spec.Backup.GarbageCollectionPeriod, backup.Child("garbageCollectionPeriod"))...)
	if d := spec.Backup.DeltaSnapshotPeriod; d != nil && d.Duration != 0 {
		errs = append(errs, DeltaSnapshotRange.validate(d, backup.Child("deltaSnapshotPeriod"))...)
	}
	if le := spec.Backup.LeaderElection; le != nil {
		election := backup.Child("leaderElection")
		errs = append(errs, ReelectionRange.validate(le.ReelectionPeriod, election.Child("reelectionPeriod"))...)
		errs = append(errs, LeaderElectionTimeoutRange.validate(le.EtcdConnectionTimeout, election.Child("etcdConnectionTimeout"))...)
	}
	return errs
}

// validate refuses d outside the range; a negative or zero duration below a positive minimum is refused
// too, so a field that already has a positivity check may report twice, each message naming the rule.
func (r durationRange) validate(d *metav1.Duration, fld *field.Path) field.ErrorList {
	if d == nil {
		return nil
	}
	switch {
	case d.Duration < r.min:
		return field.ErrorList{field.Invalid(fld, d.Duration.String(), fmt.Sprintf("must be at least %s%s", r.min, r.upTo()))}
	case r.max > 0 && d.Duration > r.max:
		return field.ErrorList{field.Invalid(fld, d.Duration.String(), fmt.Sprintf("must be at most %s (from %s)", r.max, r.min))}
	}
	return nil
}

func (r durationRange) upTo() string {
	if r.max == 0 {
		return ""
	}
	return fmt.Sprintf(" and at most %s", r.max)
}
