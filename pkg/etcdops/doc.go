// Package etcdops holds what an operator does to an Etcd by hand, on any cluster that serves the druid API:
// read a summary of its state (the Etcd's status and its snapshot leases), set or remove the annotations
// that steer druid (suspended spec reconciles, disabled component protection), run an on-demand snapshot
// through an EtcdOpsTask, and, talking to the members themselves with the Etcd's own client TLS, list the
// active etcd alarms and defragment the members. Nothing here execs into a pod or calls a sidecar: the
// kube-apiserver part needs no more than read access to Etcds and leases, patch on Etcds and create on
// EtcdOpsTasks; the member part reads the client TLS secrets (or takes the files) and reaches the members'
// client URLs. `gardener-etcd etcd` is its command line.
package etcdops
