package sidecar

import (
	"context"
	crand "crypto/rand"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/gardener-etcd/gardener-etcd/test/support/brctlbin"
)

// Settings of BenchmarkDeltaSnapshots.
const (
	envDeltaPhaseSeconds = "GARDENER_ETCD_BENCH_DELTA_PHASE_SECONDS" // length of one load phase, default 20
	envDeltaRounds       = "GARDENER_ETCD_BENCH_DELTA_ROUNDS"        // rounds of six phases, default 5
	envDeltaMemoryMiB    = "GARDENER_ETCD_BENCH_DELTA_MEMORY_LIMIT_MIB"
	envDeltaValueBytes   = "GARDENER_ETCD_BENCH_DELTA_VALUE_BYTES" // size of the written values, default 256
	deltaKeys            = 10000
	deltaWriters         = 32
	// deltaPeriod is the sidecar's default; the memory limit cuts deltas long before it elapses.
	deltaPeriod = 20 * time.Second
)

// BenchmarkDeltaSnapshots runs a sustained write load (32 writers, 256-byte values by default, over 10,000 keys)
// against etcd in rounds of six phases — without a sidecar, with ours, without, with upstream
// etcd-backup-restore v0.40.0's, without, with a bare watch that only receives (runBareWatchChild: the
// floor under a snapshotter that learns of writes from etcd's watch as ours does) — and compares the write
// throughput with each taking gzip deltas to S3 (versitygw), or only receiving, against the phase
// without one right before it: the overhead of a sidecar is
// 1 − the median of its with/without ratios over the rounds. Every phase also measures the CPU time
// etcd's process and the watcher spent per revision, and samples etcd's slow watchers (measurePhase).
// Ours is the delta snapshotter in its own process, whose peak RSS is compared with its delta memory
// limit plus a fixed overhead: the RSS the process reached by the end of start-up (Go runtime, etcd and
// S3 clients, this test binary's linked packages, S3 part buffers of chunk size × (parallel parts + 1) =
// 30 MiB and the initial full snapshot's pipeline), measured in the same run. Upstream's is `etcdbrctl snapshot` (upstream_test.go) with the same
// delta period and memory limit; its peak RSS is its VmHWM, read every 5 ms. Each sidecar starts with a
// full snapshot, before its phase begins. Upstream's binary comes from `make tools-upstream`; the
// benchmark fails without it. Run with
//
//	go test ./test/bench/sidecar -run '^$' -bench BenchmarkDeltaSnapshots -benchtime 1x -timeout 60m
func BenchmarkDeltaSnapshots(b *testing.B) {
	phase := time.Duration(envInt(envDeltaPhaseSeconds, 20)) * time.Second
	rounds := envInt(envDeltaRounds, 5)
	limit := int64(envInt(envDeltaMemoryMiB, 32)) << 20
	valueSize := envInt(envDeltaValueBytes, 256)
	upstream := brctlbin.Upstream(b)
	store := startS3(b)
	etcd, endpoint := startEtcd(b, false)
	etcdPID := etcd.cmd.Process.Pid
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		b.Fatal(err)
	}
	defer cli.Close()
	values := make([]string, 256)
	for i := range values {
		v := make([]byte, valueSize/2)
		_, _ = crand.Read(v)
		values[i] = fmt.Sprintf("%x", v)
	}
	load(b, cli, values, 2*time.Second) // warm up: every key exists, etcd's caches are filled

	var rs []deltaRound
	for b.Loop() {
		rs = rs[:0]
		for i := range rounds {
			var r deltaRound
			measure := func(watcherPID int) phaseFigures {
				return measurePhase(b, cli, endpoint, values, phase, etcdPID, watcherPID)
			}
			r.withoutOurs = measure(0)
			sc := startChild(b, "sidecar", sidecarParams{Endpoint: endpoint, Store: store(fmt.Sprintf("delta-ours-%d", i)),
				Period: deltaPeriod, MemoryLimit: limit}, &struct{}{})
			r.ours = measure(sc.cmd.Process.Pid)
			sc.finish(b, &r.oursSidecar)

			r.withoutUpstream = measure(0)
			up := upstreamSidecar(b, upstream, endpoint, store(fmt.Sprintf("delta-upstream-%d", i)), deltaPeriod, limit)
			r.upstream = measure(up.Pid())
			u, err := up.Stop()
			if err != nil {
				b.Fatal(err)
			}
			r.upstreamPeakRSSMiB = u.PeakRSSMiB

			r.withoutBare = measure(0)
			bare := startChild(b, "bare-watch", bareWatchParams{Endpoint: endpoint}, &struct{}{})
			r.bare = measure(bare.cmd.Process.Pid)
			var received bareWatchResult
			bare.finish(b, &received)
			if received.Events == 0 {
				b.Fatal("the bare watch received no event")
			}
			rs = append(rs, r)
		}
	}
	oursRatio := median(rs, func(r deltaRound) float64 { return r.ours.against(r.withoutOurs) })
	upstreamRatio := median(rs, func(r deltaRound) float64 { return r.upstream.against(r.withoutUpstream) })
	bareRatio := median(rs, func(r deltaRound) float64 { return r.bare.against(r.withoutBare) })
	var peak, idle, upstreamPeak float64
	for _, r := range rs {
		peak, idle = max(peak, r.oursSidecar.PeakRSSMiB), max(idle, r.oursSidecar.IdleRSSMiB)
		upstreamPeak = max(upstreamPeak, r.upstreamPeakRSSMiB)
	}
	limitMiB := float64(limit >> 20)
	b.ReportMetric(median(rs, func(r deltaRound) float64 { return r.withoutOurs.writesPerSecond }), "without-writes/s")
	b.ReportMetric(median(rs, func(r deltaRound) float64 { return r.ours.writesPerSecond }), "with-writes/s")
	b.ReportMetric(oursRatio, "ratio")
	b.ReportMetric(upstreamRatio, "upstream-ratio")
	b.ReportMetric(bareRatio, "bare-watch-ratio")
	b.ReportMetric(peak, "sidecar-peakRSS-MiB")
	b.ReportMetric(upstreamPeak, "upstream-peakRSS-MiB")
	fmt.Printf("etcd writes under sustained load (%d writers, %d-byte values, %d keys, %s phases), writes/s per round:\n", deltaWriters, valueSize, deltaKeys, phase)
	fmt.Printf("  %5s %9s %9s %7s %9s %9s %7s %9s %9s %7s\n", "round", "without", "ours", "ratio", "without", "upstream", "ratio", "without", "bare", "ratio")
	for i, r := range rs {
		fmt.Printf("  %5d %9.0f %9.0f %6.3fx %9.0f %9.0f %6.3fx %9.0f %9.0f %6.3fx\n", i+1,
			r.withoutOurs.writesPerSecond, r.ours.writesPerSecond, r.ours.against(r.withoutOurs),
			r.withoutUpstream.writesPerSecond, r.upstream.writesPerSecond, r.upstream.against(r.withoutUpstream),
			r.withoutBare.writesPerSecond, r.bare.writesPerSecond, r.bare.against(r.withoutBare))
	}
	fmt.Printf("  median with/without: ours %.3fx (target >= 0.95x), upstream etcd-backup-restore %s %.3fx\n", oursRatio, brctlbin.UpstreamVersion, upstreamRatio)
	fmt.Printf("  overhead on the writers: ours %.1f%%, upstream %.1f%%; floor of a snapshotter watching as ours does (a bare\n"+
		"  watch that only receives, etcd's gRPC stream on the delta watch's connection) %.1f%%\n", 100*(1-oursRatio), 100*(1-upstreamRatio), 100*(1-bareRatio))
	oursCPU := median(rs, func(r deltaRound) float64 { return r.ours.watcherCPUPerRevision })
	upstreamCPU := median(rs, func(r deltaRound) float64 { return r.upstream.watcherCPUPerRevision })
	b.ReportMetric(oursCPU, "ours-cpu-µs/rev")
	b.ReportMetric(upstreamCPU, "upstream-cpu-µs/rev")
	bareCPU := median(rs, func(r deltaRound) float64 { return r.bare.watcherCPUPerRevision })
	b.ReportMetric(bareCPU, "bare-watch-cpu-µs/rev")
	fmt.Printf("  sidecar CPU per revision written during its phase (kernel accounting; steadier than the writers'\n"+
		"  throughput on a busy machine), median: ours %.1f µs, upstream %.1f µs, ours/upstream %.2fx; the bare watch %.1f µs\n",
		oursCPU, upstreamCPU, oursCPU/upstreamCPU, bareCPU)
	var withoutEtcdCPU []float64
	for _, r := range rs {
		withoutEtcdCPU = append(withoutEtcdCPU, r.withoutOurs.etcdCPUPerRevision, r.withoutUpstream.etcdCPUPerRevision, r.withoutBare.etcdCPUPerRevision)
	}
	fmt.Printf("  etcd's own CPU per revision, median: without a watcher %.1f µs; with ours %.1f µs, upstream %.1f µs, the bare watch %.1f µs\n",
		medianOf(withoutEtcdCPU), median(rs, func(r deltaRound) float64 { return r.ours.etcdCPUPerRevision }),
		median(rs, func(r deltaRound) float64 { return r.upstream.etcdCPUPerRevision }),
		median(rs, func(r deltaRound) float64 { return r.bare.etcdCPUPerRevision }))
	var oursSlow, upstreamSlow, bareSlow slowSamples
	for _, r := range rs {
		oursSlow, upstreamSlow, bareSlow = oursSlow.add(r.ours.slow), upstreamSlow.add(r.upstream.slow), bareSlow.add(r.bare.slow)
	}
	fmt.Printf("  samples (every %s) with a slow watcher in etcd (%s > 0, responses backed up):\n"+
		"  ours %s, upstream %s, the bare watch %s\n", slowWatcherSampling, slowWatcherGauge, oursSlow, upstreamSlow, bareSlow)
	fmt.Printf("delta snapshotter (memory limit %.0f MiB, gzip to S3): peak RSS %.1f MiB, RSS after start-up %.1f MiB,\n", limitMiB, peak, idle)
	verdict := "within"
	if peak > limitMiB+idle {
		verdict = "EXCEEDS"
	}
	fmt.Printf("  peak %s limit + fixed overhead (the RSS after start-up): %.1f <= %.0f + %.1f MiB; growth under load %.1f MiB\n",
		verdict, peak, limitMiB, idle, peak-idle)
	fmt.Printf("upstream's `etcdbrctl snapshot` (same delta period and memory limit): peak RSS %.1f MiB; ours/upstream %.2fx\n", upstreamPeak, peak/upstreamPeak)
}

// deltaRound is one round of BenchmarkDeltaSnapshots: the figures of each phase and the sidecars' memory.
type deltaRound struct {
	withoutOurs, ours, withoutUpstream, upstream, withoutBare, bare phaseFigures
	oursSidecar                                                     sidecarResult
	upstreamPeakRSSMiB                                              float64
}

// phaseFigures are what one load phase measured.
type phaseFigures struct {
	writesPerSecond float64
	// CPU microseconds etcd's process, and the watching process (sidecar or bare watch; 0 without one),
	// spent per revision written during the phase.
	etcdCPUPerRevision, watcherCPUPerRevision float64
	// Samples of the phase in which etcd counted a slow watcher.
	slow slowSamples
}

// against is the ratio of f's write throughput to that of the phase without a watcher before it.
func (f phaseFigures) against(without phaseFigures) float64 {
	return f.writesPerSecond / without.writesPerSecond
}

// median is the median of f over rounds (the upper one of an even count).
func median(rounds []deltaRound, f func(deltaRound) float64) float64 {
	xs := make([]float64, 0, len(rounds))
	for _, r := range rounds {
		xs = append(xs, f(r))
	}
	return medianOf(xs)
}

// medianOf is the median of xs (the upper one of an even count); it sorts xs.
func medianOf(xs []float64) float64 {
	slices.Sort(xs)
	return xs[len(xs)/2]
}

// measurePhase is load with etcd's slow watchers sampled, and the CPU time etcd's process (etcdPID) and
// the watching one (watcherPID, 0 for none) spent per revision written meanwhile. Every phase, with a
// watcher or without, is measured the same way: the sampler's reads of etcd's /metrics cost etcd and this
// process CPU, which would otherwise count against the phases with a watcher.
func measurePhase(b *testing.B, cli *clientv3.Client, endpoint string, values []string, d time.Duration, etcdPID, watcherPID int) phaseFigures {
	b.Helper()
	revision := func() int64 {
		resp, err := cli.Get(b.Context(), "health", clientv3.WithCountOnly())
		if err != nil {
			b.Fatal(err)
		}
		return resp.Header.Revision
	}
	watcherCPUSeconds := func() float64 {
		if watcherPID == 0 {
			return 0
		}
		return cpuSecondsOf(watcherPID)
	}
	rev, etcdCPU, watcherCPU := revision(), cpuSecondsOf(etcdPID), watcherCPUSeconds()
	stopSampling := sampleSlowWatchers(b, endpoint)
	f := phaseFigures{writesPerSecond: load(b, cli, values, d)}
	f.slow = stopSampling()
	revs := float64(max(revision()-rev, 1))
	f.etcdCPUPerRevision = 1e6 * (cpuSecondsOf(etcdPID) - etcdCPU) / revs
	f.watcherCPUPerRevision = 1e6 * (watcherCPUSeconds() - watcherCPU) / revs
	return f
}

// load runs the writers for d and returns the writes per second etcd acknowledged.
func load(b *testing.B, cli *clientv3.Client, values []string, d time.Duration) float64 {
	b.Helper()
	start := time.Now()
	end := start.Add(d)
	ctx, cancel := context.WithDeadline(context.Background(), end)
	defer cancel()
	var n atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	for w := range deltaWriters {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
			for ctx.Err() == nil {
				_, err := cli.Put(ctx, fmt.Sprintf("/registry/bench/key-%05d", r.IntN(deltaKeys)), values[r.IntN(len(values))])
				if err != nil {
					// A write cut by the phase's end is no failure. The deadline travels with the
					// request, so etcd ends it at the same instant with "request timed out", and on a
					// busy machine that answer can arrive before this context's own timer has fired:
					// the clock decides, not ctx.Err().
					if left := time.Until(end); left > 0 {
						failed.Store(fmt.Errorf("%w (%s before the phase's end)", err, left.Round(time.Millisecond)))
					}
					return
				}
				n.Add(1)
			}
		})
	}
	wg.Wait()
	if err, ok := failed.Load().(error); ok {
		b.Fatal(err)
	}
	return float64(n.Load()) / time.Since(start).Seconds()
}
