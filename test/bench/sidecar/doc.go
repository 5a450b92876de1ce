// Package sidecar benchmarks the backup sidecar against what it must not be much worse than, measured in
// the same run and printed side by side:
//
//   - BenchmarkFullSnapshot: a full snapshot of a ≥ 1 GiB database streamed by our pipeline (verification,
//     revision scan, gzip, staged S3 upload to versitygw) vs a plain Maintenance.Snapshot into a local file,
//     and our `etcdbrctl snapshot` vs upstream etcd-backup-restore v0.40.0's (its full snapshot at start);
//     upstream's full snapshot only streams etcd's database, so both snapshot the same etcd (ours, 3.7);
//   - BenchmarkDeltaSnapshots: etcd's write throughput under a sustained load with our delta snapshotter,
//     with upstream's `etcdbrctl snapshot` and with a bare watch (the floor under any watch-based
//     snapshotter) running vs without any, and the sidecars' peak RSS.
//
// Every side runs in its own process (this test binary re-executed, or an etcdbrctl binary) so that its
// peak RSS (VmHWM) is its own; etcd runs in a process of its own too. Data is generated only when a
// benchmark runs. Upstream's binary comes from `make tools-upstream`; without it the benchmarks fail.
package sidecar
