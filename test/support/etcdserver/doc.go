// Package etcdserver runs real embedded etcd servers (go.etcd.io/etcd/server/v3/embed) for tests: single
// members and multi-member clusters on 127.0.0.1 with free ports and private temporary data directories,
// stopped and removed when the test ends. Tests of the backup-restore sidecar use it instead of mocks so
// that snapshots, watches, leases and compaction behave exactly as in production.
package etcdserver
