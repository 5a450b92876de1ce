package sidecar

import (
	"context"
	crand "crypto/rand"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// Settings of BenchmarkDeltaSnapshots.
const (
	envDeltaPhaseSeconds = "GARDENER_ETCD_BENCH_DELTA_PHASE_SECONDS" // length of one load phase, default 20
	envDeltaMemoryMiB    = "GARDENER_ETCD_BENCH_DELTA_MEMORY_LIMIT_MIB"
	deltaKeys            = 10000
	deltaValueSize       = 256
	deltaWriters         = 32
	// deltaPeriod is the sidecar's default; the memory limit cuts deltas long before it elapses.
	deltaPeriod = 20 * time.Second
)

// BenchmarkDeltaSnapshots runs a sustained write load (32 writers, 256-byte values over 10,000 keys)
// against etcd in four phases — without the sidecar, with it, without, with — and compares the write
// throughput with and without the delta snapshotter (gzip deltas to S3 on versitygw) running in its own
// process, whose peak RSS is compared with its delta memory limit plus a fixed overhead: the RSS the
// process reached by the end of start-up (Go runtime, etcd and S3 clients, this test binary's linked
// packages, S3 part buffers of chunk size × (parallel parts + 1) = 30 MiB and the initial full snapshot's
// pipeline), measured in the same run. Run with
//
//	go test ./test/bench/sidecar -run '^$' -bench BenchmarkDeltaSnapshots -benchtime 1x -timeout 60m
func BenchmarkDeltaSnapshots(b *testing.B) {
	phase := time.Duration(envInt(envDeltaPhaseSeconds, 20)) * time.Second
	limit := int64(envInt(envDeltaMemoryMiB, 32)) << 20
	store := startS3(b)
	_, endpoint := startEtcd(b, false)
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		b.Fatal(err)
	}
	defer cli.Close()
	values := make([]string, 256)
	for i := range values {
		v := make([]byte, deltaValueSize/2)
		_, _ = crand.Read(v)
		values[i] = fmt.Sprintf("%x", v)
	}
	load(b, cli, values, 2*time.Second) // warm up: every key exists, etcd's caches are filled

	var without, with []float64
	var sidecars []sidecarResult
	for b.Loop() {
		for i := range 4 {
			if i%2 == 0 {
				without = append(without, load(b, cli, values, phase))
				continue
			}
			sc := startChild(b, "sidecar", sidecarParams{Endpoint: endpoint, Store: store(fmt.Sprintf("delta-%d", i)),
				Period: deltaPeriod, MemoryLimit: limit}, &struct{}{})
			with = append(with, load(b, cli, values, phase))
			var res sidecarResult
			sc.finish(b, &res)
			sidecars = append(sidecars, res)
		}
	}
	wo, wi := mean(without), mean(with)
	var peak, idle float64
	for _, s := range sidecars {
		peak, idle = max(peak, s.PeakRSSMiB), max(idle, s.IdleRSSMiB)
	}
	limitMiB := float64(limit >> 20)
	b.ReportMetric(wo, "without-writes/s")
	b.ReportMetric(wi, "with-writes/s")
	b.ReportMetric(wi/wo, "ratio")
	b.ReportMetric(peak, "sidecar-peakRSS-MiB")
	fmt.Printf("etcd writes under sustained load (%d writers, %d-byte values, %d keys, %s phases):\n", deltaWriters, deltaValueSize, deltaKeys, phase)
	fmt.Printf("  without sidecar: %8.0f writes/s  (phases %.0f)\n", wo, without)
	fmt.Printf("  with sidecar:    %8.0f writes/s  (phases %.0f)\n", wi, with)
	fmt.Printf("  ratio with/without: %.3fx (target >= 0.95x)\n", wi/wo)
	fmt.Printf("delta snapshotter (memory limit %.0f MiB, gzip to S3): peak RSS %.1f MiB, RSS after start-up %.1f MiB,\n", limitMiB, peak, idle)
	verdict := "within"
	if peak > limitMiB+idle {
		verdict = "EXCEEDS"
	}
	fmt.Printf("  peak %s limit + fixed overhead (the RSS after start-up): %.1f <= %.0f + %.1f MiB; growth under load %.1f MiB\n",
		verdict, peak, limitMiB, idle, peak-idle)
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

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
