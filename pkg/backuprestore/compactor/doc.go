// Package compactor shortens a cluster's snap stream: it restores the latest full snapshot and its deltas
// into a scratch data directory, starts a private embedded etcd on it (loopback, free ports), compacts the
// history at the head revision, defragments, and stores a new full snapshot at exactly that revision. The
// next restore then starts from the new full snapshot and replays no deltas.
//
// This is `etcdbrctl compact`, which druid's compaction Job runs while the cluster keeps running: the new
// snapshot has the revision of the last delta, so the sidecar's following deltas continue it without a
// gap. The private etcd serves nobody and is never reachable from outside the loopback interface. The new
// snapshot is compressed like the newest snapshot it replaces (the sidecar's current setting), as upstream
// etcd-backup-restore's compactor writes it, so the Job needs no compression settings of its own.
//
// One hazard is guarded explicitly: etcd revokes leases whose TTL runs out while it is leader, and a
// revocation deletes keys at a new revision that the real cluster never had. If the head revision moved
// between the restore and the snapshot, the snapshot is deleted again and the compaction fails rather
// than publishing history that diverges from the cluster's.
package compactor
