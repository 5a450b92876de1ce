// Package sidecar wires `etcdbrctl server`, the backup-restore container of an etcd pod, from the
// packages that do the work:
//   - /config: the member's configuration resolved from druid's template (memberconfig), with the member
//     list of the running cluster when the last initialization added this member as a learner;
//   - /initialization/*: the initialization decision table (initializer) at every etcd start, restoring from the
//     store (restorer) when the table says so and taking a full snapshot of restored data;
//   - the backup leader (leader: the sidecar of the raft leader) runs, per leadership term, the
//     snapshotter when a store is configured (full snapshots on --schedule, deltas, garbage collection,
//     snapshot leases with --enable-snapshot-lease-renewal), the removal of members beyond the cluster
//     size (scaledown) and defragmentation (defrag.Keep: on --defragmentation-schedule, at a member over a
//     threshold, and the recovery from a NOSPACE alarm) followed by a full snapshot;
//   - /snapshot/full|delta|latest: served by the leader's snapshotter and the store; followers forward
//     to the leader's sidecar (httpapi). Without a store they answer 503 "without a snapshotter";
//   - member lease renewal (heartbeat), learner promotion and the in-place peer URL switch once etcd runs
//     (member).
package sidecar
