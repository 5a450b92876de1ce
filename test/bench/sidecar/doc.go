// Package sidecar benchmarks the backup sidecar against what it must not be much worse than, measured in
// the same run and printed side by side:
//
//   - BenchmarkFullSnapshot: a full snapshot of a ≥ 1 GiB database streamed by our pipeline (verification,
//     revision scan, gzip, staged S3 upload to versitygw) vs a plain Maintenance.Snapshot into a local file;
//   - BenchmarkDeltaSnapshots: etcd's write throughput under a sustained load with the delta snapshotter
//     running vs without it, and the snapshotter's peak RSS vs its delta memory limit.
//
// Every side runs in its own process (this test binary re-executed) so that its peak RSS (VmHWM) is its
// own; etcd runs in a process of its own too. Data is generated only when a benchmark runs.
package sidecar
