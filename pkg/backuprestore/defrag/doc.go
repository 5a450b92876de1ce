// Package defrag defragments every member of the cluster on a cron schedule (--defragmentation-schedule),
// run by the backup leader only.
//
// Defragmentation blocks the member it runs on: reads and writes to it wait until the database has been
// rewritten. Hence the order (upstream etcd-druid's multi-node proposal DEP-01, "Defragmentation"), which the upstream sidecar does not keep for
// the leader:
//   - nothing happens unless the whole cluster is healthy (every member answers, no alarm is active);
//     the check is repeated before each member, so a member failing midway stops the run;
//   - followers first, one at a time, each bounded by a timeout;
//   - the leader last, but not while it leads: leadership is moved to a healthy voting follower first
//     (MoveLeader), so that writes never wait behind the leader's defragmentation;
//   - a single-member cluster has nobody to hand leadership to and is defragmented in place (its
//     clients wait for the duration, as they would for any single-member maintenance).
//
// A full snapshot may be taken afterwards (Options.AfterDefrag): the database is then at its smallest.
package defrag
