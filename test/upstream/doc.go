// Package upstream holds the smoke tests of upstream's released etcd-druid and etcd-backup-restore binaries,
// which `make tools-upstream` builds from upstream's Go modules (bin/upstream-etcd-druid,
// bin/upstream-etcdbrctl) for the tests that run upstream's components beside ours. `make tools` does not
// build them, so their tests skip without them, under -short or not.
package upstream
