// Package chaos is the chaos suite: a three-member etcd-main on the local seed's real nodes, a
// writer that records every acknowledged write, and rounds of faults — kill -9 of the etcd or
// backup-restore container of a member and of a druid pod (containerd's `ctr` on the node's socket), a
// member's network cut (eth0 down in the pod's network namespace), a member's full disk, the S3 store
// down, druid scaled to 0, the kube-apiserver down, member leases made stale while the members serve, two
// members' sidecars frozen, and the attacks on
// the sidecar's and wrapper's state-changing endpoints from another pod's network namespace. After each
// round it reads every acknowledged write back from every member (linearizable), waits until the Etcd is
// Ready again and records what druid and the kubelets did; the table at the end has one line per round.
//
// Every fault here leaves all member volumes in place, so a lost write is always a bug.
//
// Besides the faults a run operates the cluster as usual (background.go): on-demand snapshot EtcdOpsTasks in
// every round (opstasks.go), compaction Jobs at a low events threshold (compaction.go) and rotations of the
// backup store's credentials with the old ones revoked (rotation.go); what runs while no fault is active
// must succeed, what runs during one must at least end.
//
// TestChaosShort (short_test.go) runs a few quick rounds inside `make test`; TestChaos (build tag chaos,
// `make chaos`) runs CHAOS_ROUNDS rounds in an order drawn from CHAOS_SEED, printed so a run can be
// replayed.
package chaos
