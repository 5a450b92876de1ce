// Package sidecar wires `etcdbrctl server`, the backup-restore container of an etcd pod: it resolves the
// member's configuration from druid's template (memberconfig), serves the HTTP API the etcd wrapper and
// druid use (httpapi), renews the member lease (heartbeat), switches the member's peer URLs and promotes a
// learner once etcd runs (member).
//
// Parts that belong to other components are behind interfaces and not wired here yet, with behaviour a
// caller can rely on in the meantime:
//   - initialization uses httpapi.DataDirOnlyInitializer (checks the data dir's shape; no restore, no
//     learner join), until the seed 002 decision table is plugged in as the Initializer;
//   - snapshots: the snapshot endpoints answer 503 "without a snapshotter", and the store, schedule,
//     garbage-collection, compression and snapshot-lease flags are accepted and validated but not acted
//     on, until the snapshotter is started on the backup leader;
//   - defragmentation: --defragmentation-schedule is accepted and validated, no defragmentation runs.
package sidecar
