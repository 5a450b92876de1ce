// Package defrag keeps the members' databases small: it defragments every member on a cron schedule
// (--defragmentation-schedule), when a periodic check finds a member over a threshold, and it recovers
// the cluster from an etcd NOSPACE alarm. The backup leader runs it (Keep), one run at a time.
//
// Defragmentation blocks the member it runs on: reads and writes to it wait until the database has been
// rewritten. Hence the order (upstream etcd-druid's multi-node proposal DEP-01, "Defragmentation"), which the upstream sidecar does not keep for
// the leader:
//   - nothing happens unless the whole cluster is healthy (every member answers, no alarm but NOSPACE is
//     active); the check is repeated before each member, so a member failing midway stops the run;
//   - followers first, one at a time, each bounded by a timeout;
//   - the leader last, but not while it leads: leadership is moved to a healthy voting follower first
//     (MoveLeader), so that writes never wait behind the leader's defragmentation;
//   - a single-member cluster has nobody to hand leadership to and is defragmented in place (its
//     clients wait for the duration, as they would for any single-member maintenance).
//
// A full snapshot may be taken afterwards (Options.AfterDefrag): the database is then at its smallest.
//
// Thresholds (checked every CheckPeriod): a member's file over a share of its quota while the data in
// use fits below it, or a file whose free pages exceed a share of it; either only when at least
// MinReclaimable bytes come back, so that a few free pages do not defragment (and move leadership) at
// every check. Both come from the members' Status (dbSize, dbSizeInUse, dbSizeQuota), so the quota is
// each member's own.
//
// NOSPACE: etcd refuses every write once a member's file reached its quota, and keeps refusing until the
// alarm is disarmed, even after space was freed. While the alarm is active, a check runs the recovery:
//  1. compact the history, no further than KeepOptions.CompactRevision allows (the sidecar keeps what its
//     delta watch has not delivered, and compacts nothing before its snapshotter runs);
//  2. unless the data in use fits under DisarmBelow of the quota, stop there: the alarm stays
//     (ErrOverQuota, etcdbr_nospace_over_quota 1) without defragmenting anything or moving leadership,
//     which could not help — or, when nothing could be compacted, the history may be what does not fit,
//     or (a single member) a full snapshot of this sidecar begun before the recovery's first compaction
//     still streams and its open read may hide what that freed, and the next check tries again (for 10
//     minutes at most, then it judges);
//  3. defragment the members over DisarmBelow of their quota in the order above;
//  4. disarm the alarm once every member's file is under it;
//  5. take the full snapshot, after the disarm: writes do not wait for the store, and a failed snapshot
//     neither fails the recovery nor re-arms the alarm.
//
// A recovery ended over the quota (or failed) backs off, doubling its wait, and starts earlier only when
// a member's quota changed or the data in use fits now (deleted and compacted): not when the revision
// merely moved, as deletes pass the alarm (lease expiries) without freeing enough. The over-quota state
// belongs to the backup leader's term and is cleared when it ends. Moving leadership ends the backup
// leader's term; the recovery is idempotent, and as it moves leadership only when the data fits, the
// next backup leader finds the followers defragmented and defragments only the members still too big —
// the former leader, now a follower — without moving leadership again.
package defrag
