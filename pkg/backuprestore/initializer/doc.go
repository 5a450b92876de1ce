// Package initializer decides, every time etcd is about to (re)start, what must happen to the member's
// data directory first: the initialization decision table of upstream etcd-druid's DEP-01 (eight cases, docs/design.md), from facts it
// observes itself rather than from the Etcd status, which may be stale while members restart:
//
//   - the cluster size: the number of members in the configuration template's initial-cluster;
//   - the running cluster: whether any other member answers, whether the cluster is quorate (a
//     linearizable MemberList succeeds), its cluster ID, highest revision and member list, and whether
//     this member is in it (by name, or by peer URL for members that never started);
//   - the data directory: structure (member/wal, member/snap/db), WAL metadata (member ID and cluster
//     ID) readable, the bbolt database opening read-only with its revision, and the owner marker (the
//     namespace/name of the Etcd the directory was created for, see marker.go);
//   - the store: whether backups exist and their last revision.
//
// Decide maps these facts to a Case; every case has one named action (actions.go). The table's intent
// is kept where etcd v3 forces a different mechanism, and the deviations are deliberate:
//
//   - Cases 4, 5 and 8 (a member joining a quorate cluster without usable data) do not restore the
//     latest full snapshot before joining: a restored data directory carries the identity of a new
//     cluster in its WAL and cannot join an existing one. The learner starts empty and receives the
//     leader's current raft snapshot instead, which is never older than the backup.
//   - Case 7 (the first member of a cluster with no member left running) restores the latest full
//     snapshot and every delta after it straight into the data directory (package restorer), then
//     starts a temporary embedded etcd on it only to take a new full snapshot, so that the new cluster's
//     backups do not depend on a delta chain written by the old one. The member then starts as a
//     one-member cluster; the others join it as learners (case 8 waits for it).
//   - A member without valid data never bootstraps a cluster when another member answers: only a member
//     that finds nobody, no data and (for ordinal > 0, or without backups) a fresh cluster bootstraps,
//     and then always with the full initial-cluster of n members, which cannot elect a leader alone.
//     A reachable but non-quorate cluster that has data (revision > 1) makes a member without data wait.
//   - Invalid data is never deleted: it is moved aside to <data-dir>.invalid-<UTC time> (a name never
//     used before; nothing moved aside earlier is replaced), on the same volume, for an operator to
//     inspect; the sidecar lists the kept directories on the member lease (MovedAside).
//   - Nothing is done while etcd runs on the data directory (its bbolt or WAL locks are held,
//     CheckNotInUse): Initialize fails with ErrDataDirInUse before looking at anything.
//   - The revision a directory holds is what etcd serves once started on it: when the WAL holds requests
//     after the database's consistent index (a crash left the database behind) and the single-member
//     decision compares with the backup, the WAL is replayed by a throwaway etcd on a copy (walreplay.go).
//
// Sanity mode (the wrapper asks for it after a graceful exit of etcd) checks only the structure and the
// owner marker and then reuses the data without probing the cluster: the data on disk was written
// completely, and etcd itself verifies the WAL while starting.
package initializer
