// Package restorer rebuilds an etcd member's data directory from the latest snap stream of a store:
// the newest full snapshot plus every delta after it.
//
// It avoids the deployed sidecar's defects:
//   - nothing is applied before everything is verified: every object's checksum, the revision
//     continuity of the stream (full snapshot revision + 1 = first delta start, contiguous deltas,
//     events of partly overlapping deltas at or below the applied revision skipped);
//   - the target data directory is untouched until the restore is complete: everything happens in a
//     temporary directory next to it, renamed into place at the end;
//   - deltas are applied fast and without losing keys: straight into the restored bbolt database
//     through etcd's own mvcc store, one write transaction per revision (so revisions, create and
//     mod revisions and versions are etcd's own computation) but committed in large batches without
//     fsync, with a lessor that is never promoted and therefore never expires a lease mid-replay;
//   - the final revision is checked against the last delta's.
//
// Leases: leases in the full snapshot are restored with their TTL; etcd refreshes every lease to its
// full TTL when the restored member becomes leader, so time spent in backup and restore expires
// nothing. Puts keep their lease IDs. A lease granted after the full snapshot is in no snapshot
// (watch events carry only its ID): it is created with Options.MissingLeaseTTL, so its keys live on
// while their owner keeps the lease alive and disappear after that TTL otherwise — as in the source.
// Keys whose lease expired in the source before the last delta were deleted there; those deletions
// are in the deltas and are applied.
//
// The member data directory (WAL, raft snapshot, membership) is then built by etcd's own
// etcdutl snapshot restore for the given member name, initial cluster and cluster token.
package restorer
