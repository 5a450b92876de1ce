// Package snapshotter backs up one etcd cluster continuously: full snapshots on a cron schedule and on
// demand, delta snapshots from a watch, garbage collection of old snapshots, snapshot leases and
// Prometheus metrics. Only the backup leader runs it (leader election is elsewhere): Run is driven by
// a context that the leader cancels when it loses leadership.
//
// Invariants the restorer relies on, and how they are kept:
//   - a full snapshot's name carries exactly the revision of its data: the revision is computed from
//     the streamed database itself (package boltstream), never from a separate request;
//   - deltas never overlap and never leave gaps: a (new) snapshotter continues from the last revision
//     in the store, its watch starts at that revision + 1, and a delta is written only if its first
//     event is exactly the revision after the last stored one; otherwise (e.g. the watch revision was
//     compacted) a full snapshot is taken instead;
//   - nothing is held twice: snapshots stream from etcd through verification and compression into the
//     store; deltas are encoded while they upload.
package snapshotter
