// Package pod runs the etcd pod's two containers together in-process: the backup-restore sidecar and the
// etcd wrapper, each on the other's real HTTP API, with druid's configuration template. The suites live
// here, outside both packages, because neither package imports the other: they meet only on the wire
// (pkg/podwire, pkg/podaccess), and so do these tests.
package pod
