package sidecar

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"go.uber.org/zap"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
	"github.com/gardener-etcd/gardener-etcd/test/support/brctlbin"
)

// envFullSnapshotMiB sets the database size of BenchmarkFullSnapshot (default 1024 MiB).
const envFullSnapshotMiB = "GARDENER_ETCD_BENCH_FULL_SNAPSHOT_MIB"

// envFullSnapshotRounds sets how many baseline/ours pairs BenchmarkFullSnapshot takes (default 5).
const envFullSnapshotRounds = "GARDENER_ETCD_BENCH_FULL_SNAPSHOT_ROUNDS"

// BenchmarkFullSnapshot compares our full snapshot pipeline into S3 (versitygw) with gzip on against a
// plain Maintenance.Snapshot into a local file, and our `etcdbrctl snapshot` against upstream
// etcd-backup-restore v0.40.0's `etcdbrctl snapshot` (its one full snapshot at start, gzip, into the same
// bucket; upstream_test.go), on the same ≥ 1 GiB database in the same run
// (GARDENER_ETCD_BENCH_FULL_SNAPSHOT_MIB sets the size). One round takes a few seconds on 2 cores, where
// anything else running shifts a single ratio by ±0.2: the benchmark takes several rounds back to back
// and reports the median of each ratio, with every round printed. Upstream's binary comes from
// `make tools-upstream`; the benchmark fails without it. Run with
//
//	go test ./test/bench/sidecar -run '^$' -bench BenchmarkFullSnapshot -benchtime 1x -timeout 60m
func BenchmarkFullSnapshot(b *testing.B) {
	size := int64(envInt(envFullSnapshotMiB, 1024)) << 20
	rounds := envInt(envFullSnapshotRounds, 5)
	upstream, oursBinary := brctlbin.Upstream(b), brctlbin.Ours(b)
	store := startS3(b)
	etcd, endpoint := startEtcd(b, true)
	others := otherProcesses{etcd: etcd.cmd.Process.Pid, s3: childPID("versitygw")}
	start := time.Now()
	dbSize := fill(b, endpoint, size)
	b.Logf("generated a %d MiB database in %s", dbSize>>20, time.Since(start).Round(time.Second))

	var pairs, plainPairs, binaryPairs []snapshotPair
	var local snapshotResult
	var oursStore, upStore snapstore.Config // the last round's
	for b.Loop() {
		pairs, plainPairs, binaryPairs = pairs[:0], plainPairs[:0], binaryPairs[:0]
		for range rounds {
			base := runSnapshot(b, "snapshot-baseline", others, snapshotParams{Label: "baseline", Endpoint: endpoint, File: filepath.Join(b.TempDir(), "snapshot.db")})
			ours := runSnapshot(b, "snapshot-ours", others, snapshotParams{Label: "ours-s3", Endpoint: endpoint,
				Store: store(fmt.Sprintf("full-%d", time.Now().UnixNano())), Compression: snapshot.CompressionGzip})
			pairs = append(pairs, snapshotPair{base: base, ours: ours})
			// Uncompressed, like the baseline: what the pipeline (verification, scan, upload) costs apart
			// from gzip.
			plain := runSnapshot(b, "snapshot-ours", others, snapshotParams{Label: "ours-s3-uncompressed", Endpoint: endpoint,
				Store: store(fmt.Sprintf("full-plain-%d", time.Now().UnixNano()))})
			plainPairs = append(plainPairs, snapshotPair{base: base, ours: plain})
			oursStore, upStore = store(fmt.Sprintf("full-etcdbrctl-%d", time.Now().UnixNano())), store(fmt.Sprintf("full-upstream-%d", time.Now().UnixNano()))
			oursBin := runBinarySnapshot(b, oursBinary, false, endpoint, oursStore, others)
			up := runBinarySnapshot(b, upstream, true, endpoint, upStore, others)
			binaryPairs = append(binaryPairs, snapshotPair{base: up, ours: oursBin})
		}
		// The same pipeline into a Local store tells the pipeline's cost from the S3 server's.
		local = runSnapshot(b, "snapshot-ours", others, snapshotParams{Label: "ours-local", Endpoint: endpoint, Store: snapstore.Config{
			Provider: druidv1alpha1.StorageProviderLocal, Container: "bkp", Prefix: "full", LocalRoot: b.TempDir()},
			Compression: snapshot.CompressionGzip})
	}
	mb := float64(dbSize) / 1e6
	median := medianPair(pairs, mb)
	base, ours := median.base, median.ours
	plainMedian := medianPair(plainPairs, mb)
	binaryMedian := medianPair(binaryPairs, mb)
	up, oursBin := binaryMedian.base, binaryMedian.ours
	baseRate, oursRate := mb/base.Seconds, mb/ours.Seconds
	b.ReportMetric(oursRate, "ours-MB/s")
	b.ReportMetric(baseRate, "baseline-MB/s")
	b.ReportMetric(oursRate/baseRate, "ratio")
	b.ReportMetric(plainMedian.ratio(mb), "uncompressed-ratio")
	b.ReportMetric(mb/local.Seconds, "ours-local-MB/s")
	b.ReportMetric(ours.PeakRSSMiB, "ours-peakRSS-MiB")
	b.ReportMetric(base.PeakRSSMiB, "baseline-peakRSS-MiB")
	b.ReportMetric(mb/up.Seconds, "upstream-MB/s")
	b.ReportMetric(binaryMedian.ratio(mb), "etcdbrctl/upstream")
	b.ReportMetric(up.PeakRSSMiB, "upstream-peakRSS-MiB")
	fmt.Printf("full snapshot of a %.0f MB database (revision %d), %d rounds taken back to back:\n", mb, ours.Revision, len(pairs))
	for i, p := range pairs {
		bp, pp := binaryPairs[i], plainPairs[i]
		fmt.Printf("  round %d: ours %6.2fs, uncompressed %6.2fs, baseline %6.2fs, ratios %.2fx %.2fx; etcdbrctl %6.2fs, upstream %6.2fs, ratio %.2fx\n", i+1,
			p.ours.Seconds, pp.ours.Seconds, p.base.Seconds, p.ratio(mb), pp.ratio(mb), bp.ours.Seconds, bp.base.Seconds, bp.ratio(mb))
	}
	fmt.Printf("our etcdbrctl against upstream etcd-backup-restore %s's, both `etcdbrctl snapshot` (gzip → S3) timed from exec\n"+
		"until the snapshot is stored (ours exits, upstream logs it), peak RSS = VmHWM read every 5 ms; the median round:\n", brctlbin.UpstreamVersion)
	fmt.Printf("  etcdbrctl (ours):                 %7.2fs %7.1f MB/s  peak RSS %6.1f MiB  cpu %6.2fs\n", oursBin.Seconds, mb/oursBin.Seconds, oursBin.PeakRSSMiB, oursBin.CPUSeconds)
	fmt.Printf("  upstream etcdbrctl:               %7.2fs %7.1f MB/s  peak RSS %6.1f MiB  cpu %6.2fs  %s\n", up.Seconds, mb/up.Seconds, up.PeakRSSMiB, up.CPUSeconds, up.Object)
	fmt.Printf("  ratio etcdbrctl/upstream: %.2fx the MB/s (target >= 5x), %.2fx the peak RSS\n", binaryMedian.ratio(mb), oursBin.PeakRSSMiB/up.PeakRSSMiB)
	fmt.Printf("  stored (the last round): ours %.1f MB, upstream %.1f MB (gzip levels differ: ours klauspost level 2, upstream's the standard library's default)\n",
		float64(storedBytes(b, oursStore))/1e6, float64(storedBytes(b, upStore))/1e6)
	fmt.Printf("against a plain Maintenance.Snapshot into a file, in-process sides; the median round:\n")
	fmt.Printf("  ours (gzip → S3):                 %7.2fs %7.1f MB/s  peak RSS %6.1f MiB  %s\n", ours.Seconds, oursRate, ours.PeakRSSMiB, ours.Object)
	fmt.Printf("  baseline (Maintenance.Snapshot):  %7.2fs %7.1f MB/s  peak RSS %6.1f MiB\n", base.Seconds, baseRate, base.PeakRSSMiB)
	fmt.Printf("  ours (gzip → Local store), once:  %7.2fs %7.1f MB/s  peak RSS %6.1f MiB\n", local.Seconds, mb/local.Seconds, local.PeakRSSMiB)
	fmt.Printf("  ratio ours/baseline: %.2fx (target >= 0.9x); the baseline does not compress, ours deflates the stream with gzip\n", oursRate/baseRate)
	fmt.Printf("  ratio ours uncompressed/baseline (like for like, the median of its own): %.2fx, ours uncompressed %.2fs, baseline %.2fs\n",
		plainMedian.ratio(mb), plainMedian.ours.Seconds, plainMedian.base.Seconds)
	fmt.Printf("  CPU seconds (snapshot process / etcd / S3 server) of a machine with %d CPUs:\n", runtime.NumCPU())
	for _, r := range []struct {
		name string
		res  snapshotResult
	}{{"ours (gzip → S3)", ours}, {"ours (uncompressed → S3)", plainMedian.ours}, {"ours (gzip → Local store)", local}, {"baseline", base}, {"etcdbrctl (ours)", oursBin}, {"upstream etcdbrctl", up}} {
		fmt.Printf("    %-26s %6.2f / %6.2f / %6.2f\n", r.name, r.res.CPUSeconds, r.res.EtcdCPUSeconds, r.res.S3CPUSeconds)
	}
}

// snapshotPair is a baseline snapshot (or upstream's) and ours, taken one right after the other.
type snapshotPair struct{ base, ours snapshotResult }

func (p snapshotPair) ratio(mb float64) float64 { return (mb / p.ours.Seconds) / (mb / p.base.Seconds) }

// medianPair is the pair with the median ratio (the upper one of an even count).
func medianPair(pairs []snapshotPair, mb float64) snapshotPair {
	sorted := slices.Clone(pairs)
	slices.SortFunc(sorted, func(a, b snapshotPair) int { return cmp.Compare(a.ratio(mb), b.ratio(mb)) })
	return sorted[len(sorted)/2]
}

// otherProcesses are the processes besides the snapshot process that a snapshot keeps busy; their CPU
// time is reported with the snapshot's to show where a machine's cores went.
type otherProcesses struct{ etcd, s3 int }

func runSnapshot(b *testing.B, mode string, others otherProcesses, p snapshotParams) snapshotResult {
	b.Helper()
	var res snapshotResult
	c := startChild(b, mode, p, &struct{}{})
	etcd, s3 := cpuSecondsOf(others.etcd), cpuSecondsOf(others.s3)
	c.finish(b, &res)
	res.EtcdCPUSeconds, res.S3CPUSeconds = cpuSecondsOf(others.etcd)-etcd, cpuSecondsOf(others.s3)-s3
	return res
}

// fill writes Kubernetes-object-like values until etcd's database reaches size bytes, and returns its size.
func fill(b *testing.B, endpoint string, size int64) int64 {
	b.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		b.Fatal(err)
	}
	defer cli.Close()
	const valueSize, workers, batch = 32 << 10, 8, 2048
	values := make([]string, 64)
	for i := range values {
		values[i] = objectValue(i, valueSize)
	}
	ctx := context.Background()
	for next := 0; ; next += batch {
		status, err := cli.Status(ctx, endpoint)
		if err != nil {
			b.Fatal(err)
		}
		if status.DbSize >= size {
			return status.DbSize
		}
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for w := range workers {
			wg.Go(func() {
				for i := next + w; i < next+batch; i += workers {
					if _, err := cli.Put(ctx, fmt.Sprintf("/registry/configmaps/shoot--bench/object-%08d", i), values[i%len(values)]); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
}
