package sidecar

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshotter"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
)

// TestSidecarBenchChild is one process of a benchmark of this package; it does nothing in a normal test run.
func TestSidecarBenchChild(t *testing.T) {
	switch os.Getenv(envMode) {
	case "":
		t.Skip("only run by the benchmarks of this package")
	case "etcd":
		runEtcdChild(t)
	case "snapshot-baseline", "snapshot-ours":
		runSnapshotChild(t, os.Getenv(envMode))
	case "bare-watch":
		runBareWatchChild(t)
	case "sidecar":
		runSidecarChild(t)
	default:
		t.Fatalf("unknown mode %q", os.Getenv(envMode))
	}
}

type etcdParams struct {
	DataDir string
	NoFsync bool
}

type etcdReady struct{ Endpoint string }

type rssResult struct{ PeakRSSMiB float64 }

// runEtcdChild serves an etcd member on loopback until stdin closes.
func runEtcdChild(t *testing.T) {
	var p etcdParams
	childParams(t, &p)
	loopback := url.URL{Scheme: "http", Host: "127.0.0.1:0"}
	peer, _ := url.Parse("http://127.0.0.1:2380")
	cfg := embed.NewConfig()
	cfg.Name, cfg.Dir = "bench", p.DataDir
	cfg.InitialCluster = "bench=" + peer.String()
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{loopback}, []url.URL{loopback}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{loopback}, []url.URL{*peer}
	cfg.QuotaBackendBytes = 8 << 30
	cfg.UnsafeNoFsync = p.NoFsync
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(time.Minute):
		t.Fatal("etcd not ready")
	}
	report(tagReady, etcdReady{Endpoint: "http://" + e.Clients[0].Addr().String()})
	waitForStdinEOF()
	report(tagResult, rssResult{PeakRSSMiB: peakRSSMiB(t)})
}

// envCPUProfile, when set, makes the snapshot and sidecar children write CPU profiles to
// <value>.<label> (the snapshot's label, or sidecar-<store prefix>).
const envCPUProfile = "GARDENER_ETCD_BENCH_CPUPROFILE"

// startCPUProfile profiles the process into <envCPUProfile>.label when the variable is set; the returned
// function stops it.
func startCPUProfile(t *testing.T, label string) (stop func()) {
	prof := os.Getenv(envCPUProfile)
	if prof == "" {
		return func() {}
	}
	f, err := os.Create(prof + "." + label)
	if err != nil {
		t.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		t.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}
}

type snapshotParams struct {
	Label       string // names the CPU profile (envCPUProfile)
	Endpoint    string
	File        string               // baseline: where the snapshot goes
	Store       snapstore.Config     // ours
	Compression snapshot.Compression // ours; empty stores etcd's stream uncompressed
}

type snapshotResult struct {
	Seconds, PeakRSSMiB float64
	CPUSeconds          float64 // user + system time of the snapshot process during the snapshot
	// Filled in by the parent: CPU time of etcd and of the S3 server from the child's start to its end.
	EtcdCPUSeconds, S3CPUSeconds float64
	Bytes                        int64
	Revision                     int64
	Object                       string
}

// runSnapshotChild takes one full snapshot: the baseline streams Maintenance.Snapshot into a file and
// syncs it; ours runs the snapshotter's full snapshot pipeline into the store, compressed or not.
func runSnapshotChild(t *testing.T, mode string) {
	var p snapshotParams
	childParams(t, &p)
	cli := client(t, p.Endpoint)
	report(tagReady, struct{}{})
	ctx := context.Background()
	defer startCPUProfile(t, p.Label)()
	start, startCPU := time.Now(), processCPUSeconds(t)
	var res snapshotResult
	if mode == "snapshot-baseline" {
		rc, err := cli.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(p.File)
		if err != nil {
			t.Fatal(err)
		}
		n, err := f.ReadFrom(rc)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
		_ = f.Close()
		_ = rc.Close()
		res.Bytes, res.Object = n, p.File
	} else {
		store, err := snapstore.New(ctx, p.Store, stderrLogger())
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		s, err := snapshotter.New(snapshotter.Options{Config: snapshotter.OneShot(p.Compression), Client: cli, Store: store, Log: stderrLogger()})
		if err != nil {
			t.Fatal(err)
		}
		snap, err := s.TakeFull(ctx, false)
		if err != nil {
			t.Fatal(err)
		}
		status, err := cli.Status(ctx, p.Endpoint)
		if err != nil {
			t.Fatal(err)
		}
		res.Bytes, res.Revision, res.Object = status.DbSize, snap.LastRevision, snap.SnapName
	}
	res.Seconds, res.PeakRSSMiB = time.Since(start).Seconds(), peakRSSMiB(t)
	res.CPUSeconds = processCPUSeconds(t) - startCPU
	report(tagResult, res)
}

type sidecarParams struct {
	Endpoint    string
	Store       snapstore.Config
	Period      time.Duration
	MemoryLimit int64
}

type sidecarResult struct {
	PeakRSSMiB, IdleRSSMiB float64
	LastRevision           int64
}

// runSidecarChild runs the delta snapshotter as the sidecar does until stdin closes, then stores what is
// left and reports its peak RSS.
func runSidecarChild(t *testing.T) {
	var p sidecarParams
	childParams(t, &p)
	ctx := context.Background()
	cli := client(t, p.Endpoint)
	store, err := snapstore.New(ctx, p.Store, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	cfg := snapshotter.Default()
	cfg.Schedule, cfg.GarbageCollectionPeriod, cfg.Compression = "", 0, snapshot.CompressionGzip
	cfg.DeltaSnapshotPeriod, cfg.DeltaSnapshotMemoryLimit = p.Period, p.MemoryLimit
	s, err := snapshotter.New(snapshotter.Options{Config: cfg, Client: cli, WatchClient: watchClient(t, p.Endpoint), Store: store, Log: logr.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	idle := peakRSSMiB(t)
	stopProfile := startCPUProfile(t, "sidecar-"+p.Store.Prefix)
	report(tagReady, struct{}{})
	waitForStdinEOF()
	stopProfile()
	if _, err := s.TakeDelta(ctx); err != nil {
		t.Fatal(err)
	}
	s.Stop()
	report(tagResult, sidecarResult{PeakRSSMiB: peakRSSMiB(t), IdleRSSMiB: idle, LastRevision: s.LastRevision()})
}

// stderrLogger shows the snapshotter's own timing in the benchmark output.
func stderrLogger() logr.Logger {
	return funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{})
}

func client(t *testing.T, endpoint string) *clientv3.Client {
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 10 * time.Second, Logger: zap.NewNop(),
		MaxCallRecvMsgSize: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cli.Close() })
	return cli
}

// watchClient is the delta watch's own client, as the sidecar dials it.
func watchClient(t *testing.T, endpoint string) *clientv3.Client {
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 10 * time.Second, Logger: zap.NewNop(),
		DialOptions: snapshotter.WatchDialOptions()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cli.Close() })
	return cli
}
