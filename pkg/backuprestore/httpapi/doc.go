// Package httpapi is the sidecar's HTTP API (upstream etcd-backup-restore's endpoints): the etcd wrapper drives
// initialization through it and fetches etcd's configuration from it, probes and druid read its health,
// operators and other sidecars trigger snapshots, Prometheus scrapes it.
//
// The handlers depend only on small interfaces (Initializer, Snapshotter, LeaderResolver, a config and a
// health function), so that the decision-table initializer, the snapshotter and the backup-leader election
// plug in without this package knowing them. A missing Snapshotter is a valid configuration: the snapshot
// endpoints then answer 503 and say so, instead of pretending a backup was taken.
package httpapi
