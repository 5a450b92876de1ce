// Package boltstream learns the etcd revision of a full snapshot from the snapshot bytes themselves
// while they stream past, so that the revision in a full snapshot's name is exactly the revision of
// the data in it.
//
// Why not ask etcd: Maintenance.Snapshot carries no revision, and a Get or Status before or after the
// snapshot reads a different moment — the known defect of the upstream sidecar, whose full-snapshot
// names could claim a revision the database did not have. Why not spool the snapshot to disk and open
// it with bbolt: that is a second full copy of a database of up to 8 GiB.
//
// How: etcd streams the database with bbolt's Tx.WriteTo, i.e. the meta page of one read transaction
// followed by the file's pages. Everything reachable from that meta page belongs to that one
// transaction, so the revision computed from it is atomic with the snapshot by construction. The
// Scanner records a few bytes per page (branch children, the last key of leaves, bucket entries of the
// root bucket, two values of etcd's meta bucket) and, at the end, walks from the meta page: the
// revision is the highest key of etcd's "key" bucket (its rightmost leaf), raised to the finished or
// scheduled compaction revision exactly as etcd's mvcc store does when it opens a database. Stale pages
// (freed by later transactions) are recorded too but never reached by the walk.
//
// Memory: 9 bytes per database page (2.3 MiB for a 1 GiB database with 4 KiB pages) plus the children
// of branch pages (8 bytes each), plus multi-page (overflow) pages while they are assembled.
package boltstream
