// Package copier copies a cluster's backups from one store to another: `etcdbrctl copy`, which the
// worker Job of an EtcdCopyBackupsTask runs when a control plane moves (e.g. a shoot migrated to another
// seed restores from the copy).
//
// What is copied: the newest full snapshots, at most MaxBackups of them and none older than MaxBackupAge
// days, and every delta after the oldest of them, so that the target's latest snap stream restores exactly
// what the source's does. Legacy v1 snapshots are written in the v2 layout (the only one stores write).
// A final full snapshot is written without its ".final" suffix, as upstream etcd-backup-restore's copy
// writes it; a target holding it under either name counts as holding it.
//
// How: objects are copied in revision order, so an interrupted copy leaves the target with a restorable
// prefix of the history; each object streams from the source to the target while its checksum trailer is
// verified on the way, and a corrupted object fails the upload, which leaves nothing behind. Objects the
// target already holds are skipped, which makes the copy idempotent and lets a retried Job resume.
//
// When: with WaitForFinalSnapshot the copy starts only once the source's latest full snapshot is marked
// final, i.e. the source cluster was shut down and took its last snapshot, so nothing written before the
// move is missing from the copy. A final snapshot is only what it says when nothing follows it: one that the
// source backed up later revisions after does not release the copy, and later revisions that appear while
// the copy runs fail it (ErrWrittenAfterFinal) instead of reporting an incomplete copy as done.
package copier
