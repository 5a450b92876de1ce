package decide

import (
	"slices"
	"time"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/health"
)

// backupAtQuorumLoss judges the backup as it stood when the cluster lost its quorum, for case 10 when
// BackupReady is False now.
//
// Why the moment of the loss counts: a cluster without quorum commits no write, so a backup that was
// current then still holds every acknowledged write — exactly what BackupReady True promises at any other
// time (the latest snapshot at most DeltaSnapshotStalenessFactor delta periods old). Why the current
// BackupReady cannot be the test: without an etcd leader no sidecar is the backup leader, so no snapshot
// is taken and BackupReady turns False three delta periods after the loss — with the default period of
// 20 s long before the lost members are NotReady past their grace period, so every quorum loss would end
// in manual action.
//
// The moment is estimated from the member leases: lostAt is the quorum-th most recent renewal among the
// cluster's members. Until then a quorum of members renewed; after it fewer did, and those are the members
// case 10 counts as lost.
//
// ok is false when the past cannot be judged: fewer than a quorum of members ever renewed. (Stale leases
// of members whose etcd may still serve never get here: quorumLost stops at maybeServing.)
func backupAtQuorumLoss(in Input, size int32) (backup druidv1alpha1.Condition, lostAt time.Time, ok bool) {
	etcd := in.Observed.Etcd
	var renewals []time.Time
	for _, l := range in.Observed.MemberLeases {
		if ordinal, found := druidv1alpha1.OrdinalOf(etcd, l.Name); found && int32(ordinal) < size && l.Spec.RenewTime != nil {
			renewals = append(renewals, l.Spec.RenewTime.Time)
		}
	}
	quorum := int(health.Quorum(size))
	if len(renewals) < quorum {
		return druidv1alpha1.Condition{}, time.Time{}, false
	}
	slices.SortFunc(renewals, func(a, b time.Time) int { return b.Compare(a) })
	lostAt = renewals[quorum-1]
	return health.BackupReadyCondition(etcd.Spec.Backup, in.Observed.SnapshotLeases, lostAt), lostAt, true
}
