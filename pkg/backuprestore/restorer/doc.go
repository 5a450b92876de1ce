// Package restorer rebuilds an etcd member's data directory from the latest snap stream of a store:
// the newest full snapshot plus every delta after it. Or, to a point in time (Options.TargetRevision,
// Options.TargetTime), exactly the state at a chosen revision: the newest full snapshot at or below it
// plus the deltas' events up to and including it, none after (target.go). It only lists and reads the
// store: the backups are the same objects, byte for byte, after a restore.
//
// It avoids the upstream sidecar's defects:
//   - nothing reaches the data directory before everything is verified: every object's checksum, the
//     revision continuity of the stream (full snapshot revision + 1 = first delta start, contiguous
//     deltas, events of partly overlapping deltas at or below the applied revision skipped). The
//     whole restore happens in a temporary directory next to the data directory, renamed into place at
//     the end; any error removes it, so the data directory stays absent or empty;
//   - each object is read once: the full snapshot is streamed into a file while its checksum is
//     checked, each delta is decompressed, decoded and checksummed in one pass while the events
//     decoded before are written (a corrupted delta fails the restore when its trailer is reached,
//     and its events only ever reached the temporary directory);
//   - deltas are applied fast, in memory that does not grow with their number or size: the full
//     snapshot first becomes a member data directory through etcd's own etcdutl snapshot restore
//     (WAL, raft snapshot, membership of the initial cluster), then the delta events are written
//     straight into that member's bbolt database, as the records etcd's mvcc store writes (same
//     bucket keys, same protobuf, create revisions and versions by the store's rules), committed in
//     large batches without fsync and synced once;
//   - the final revision is checked against the last delta's.
//
// Leases: leases in the full snapshot are restored with their TTL; etcd refreshes every lease to its
// full TTL when the restored member becomes leader, so time spent in backup and restore expires
// nothing. Puts keep their lease IDs. A lease granted after the full snapshot is in no snapshot
// (watch events carry only its ID): it is created with Options.MissingLeaseTTL, so its keys live on
// while their owner keeps the lease alive and disappear after that TTL otherwise — as in the source.
// Keys whose lease expired in the source before the last delta were deleted there; those deletions
// are in the deltas and are applied.
package restorer
