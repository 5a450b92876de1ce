// Package etcdops holds what an operator does to an Etcd by hand, on any cluster that serves the druid API:
// read a summary of its state (the Etcd's status and its snapshot leases), set or remove the annotations
// that steer druid (suspended spec reconciles, disabled component protection), and run an on-demand
// snapshot through an EtcdOpsTask. It only talks to the kube-apiserver: nothing here execs into a pod or
// calls a sidecar, so it needs no more than read access to Etcds and leases, patch on Etcds and create on
// EtcdOpsTasks. `gardener-etcd etcd` is its command line.
package etcdops
