package restorer_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/restorer"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
	"github.com/gardener-etcd/gardener-etcd/test/support/backuptest"
	"github.com/gardener-etcd/gardener-etcd/test/support/benchproc"
	"github.com/gardener-etcd/gardener-etcd/test/support/brctlbin"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

// Each side of the benchmark runs in its own process (this test binary, re-executed) so that its
// peak RSS is its own.
const (
	benchChildMode    = "GARDENER_ETCD_BENCH_RESTORE_MODE"
	benchChildStore   = "GARDENER_ETCD_BENCH_RESTORE_STORE"
	benchChildDataDir = "GARDENER_ETCD_BENCH_RESTORE_DATADIR"
	benchResultTag    = "BENCH-RESULT "
	// benchProfileEnv, when set, makes our side write <value>.<revisions>.cpu and .heap profiles.
	benchProfileEnv = "GARDENER_ETCD_BENCH_PROFILE"
	// benchTxnMaxEnv bounds the sizes the one-transaction-per-revision baseline runs for (default
	// 200000): at about 5,000 revisions/s it would take minutes for 2M revisions.
	benchTxnMaxEnv = "BENCH_RESTORE_TXN_MAX"
)

// The sides of the benchmark.
const (
	modeOurs       = "ours"
	modeTxn        = "txn-baseline"
	modeDecompress = "decompress-floor"
)

type benchResult struct {
	Mode       string          `json:"mode"`
	Seconds    float64         `json:"seconds"`
	CPUSeconds float64         `json:"cpuSeconds"`
	Revisions  int64           `json:"revisions"`
	Final      int64           `json:"final"`
	Memory     benchproc.Peaks `json:"memory"`
}

func (r benchResult) rate() float64 { return float64(r.Revisions) / r.Seconds }

// BenchmarkRestore measures our restore of a full snapshot + 20k, 200k and 2M delta revisions
// (BENCH_RESTORE_REVISIONS overrides) against upstream etcd-backup-restore v0.40.0's `etcdbrctl restore`
// and two baselines of the same run: the upstream sidecar's approach rebuilt here (one transaction per
// revision through an embedded etcd, up to BENCH_RESTORE_TXN_MAX revisions) and the decompression of the
// deltas alone, the floor of any restore. Our etcdbrctl and upstream's run as binaries with the same
// flags on the same store (bench_upstream_test.go); upstream's binary comes from `make tools-upstream`
// and the benchmark fails without it. Every side starts from the store; every side that writes a data
// directory is then started and compared key by key with the source. Run with
//
//	go test ./pkg/backuprestore/restorer -run '^$' -bench BenchmarkRestore -benchtime 1x -timeout 60m
func BenchmarkRestore(b *testing.B) {
	txnMax := int64(200000)
	if n, err := strconv.ParseInt(os.Getenv(benchTxnMaxEnv), 10, 64); err == nil {
		txnMax = n
	}
	type row struct {
		w     benchWorkload
		sides []benchResult
	}
	var rows []row
	upstream, oursBinary := brctlbin.Upstream(b), brctlbin.Ours(b)
	for _, revisions := range benchSizes(b) {
		b.Run(strconv.Itoa(revisions), func(b *testing.B) {
			start := time.Now()
			w := loadOrGenerateWorkload(b, revisions, embeddedSource)
			b.Logf("workload: %s + %d deltas up to revision %d (%s)", w.Stream.Full.SnapName, len(w.Stream.Deltas),
				w.Stream.LastRevision(), time.Since(start).Round(time.Second))
			start = time.Now()
			w35 := loadOrGenerateWorkload(b, revisions, etcd35Source)
			b.Logf("workload from etcd %s: %s + %d deltas up to revision %d (%s)", upstreamEtcdVersion, w35.Stream.Full.SnapName, len(w35.Stream.Deltas),
				w35.Stream.LastRevision(), time.Since(start).Round(time.Second))
			var sides []benchResult
			for b.Loop() {
				sides = []benchResult{runOursVerified(b, w), runBenchChild(b, modeDecompress, w.Root, "")}
				if int64(revisions) <= txnMax {
					sides = append(sides, runBenchChild(b, modeTxn, w.Root, filepath.Join(b.TempDir(), "data")))
				}
				sides = append(sides, runBinaryRestoreVerified(b, modeOursBinary, oursBinary, w35),
					runBinaryRestoreVerified(b, modeUpstream, upstream, w35))
			}
			for _, r := range sides {
				want := w.Stream.LastRevision()
				if r.Mode == modeOursBinary || r.Mode == modeUpstream {
					want = w35.Stream.LastRevision()
				}
				if r.Mode != modeDecompress && r.Final != want {
					b.Fatalf("%s ended at revision %d, want %d", r.Mode, r.Final, want)
				}
			}
			b.ReportMetric(sides[0].rate(), "ours-rev/s")
			b.ReportMetric(sides[0].Memory.RSS, "ours-peakRSS-MiB")
			binary, up := sideOf(sides, modeOursBinary), sideOf(sides, modeUpstream)
			b.ReportMetric(up.rate(), "upstream-rev/s")
			b.ReportMetric(up.Memory.RSS, "upstream-peakRSS-MiB")
			b.ReportMetric(binary.rate()/up.rate(), "etcdbrctl/upstream-rev/s")
			rows = append(rows, row{w: w, sides: sides})
		})
	}
	fmt.Printf("restore of a full snapshot (%d keys, %d-byte values) + delta revisions, one put each; peak RSS = VmHWM, its parts sampled;\n"+
		"rev/cpu-s (revisions per CPU second of the side's process) depends far less on the machine's load than wall rev/s;\n"+
		"%s and %s (upstream etcd-backup-restore %s) are binaries timed from exec to exit, on the same workload backed up\n"+
		"from etcd %s (the newest etcd upstream restores), each checked by starting etcd %s on what it restored:\n",
		benchKeys, benchValueSize, modeOursBinary, modeUpstream, brctlbin.UpstreamVersion, upstreamEtcdVersion, upstreamEtcdVersion)
	fmt.Printf("%9s %-18s %8s %8s %10s %10s %9s %8s %8s %8s  %s\n", "revisions", "side", "wall s", "cpu s", "rev/s", "rev/cpu-s",
		"peak RSS", "anon", "file", "Go heap", "ratio")
	for _, r := range rows {
		ours := r.sides[0]
		for _, s := range r.sides {
			ratio := ""
			switch s.Mode {
			case modeTxn:
				ratio = fmt.Sprintf("ours %.1fx faster", ours.rate()/s.rate())
			case modeDecompress:
				ratio = fmt.Sprintf("ours takes %.1fx the floor", ours.Seconds/s.Seconds)
			case modeUpstream:
				binary := sideOf(r.sides, modeOursBinary)
				ratio = fmt.Sprintf("etcdbrctl/upstream: %.2fx the rev/s, %.2fx the rev/cpu-s, %.2fx the peak RSS", binary.rate()/s.rate(),
					s.CPUSeconds/binary.CPUSeconds, binary.Memory.RSS/s.Memory.RSS)
			}
			parts := fmt.Sprintf("%7.0fM %7.0fM %7.0fM", s.Memory.Anon, s.Memory.File, s.Memory.GoHeap)
			if s.Memory.Samples == 0 { // a binary: the kernel keeps only its peak RSS
				parts = fmt.Sprintf("%8s %8s %8s", "-", "-", "-")
			}
			fmt.Printf("%9d %-18s %8.2f %8.2f %10.0f %10.0f %8.0fM %s  %s\n", ours.Revisions, s.Mode, s.Seconds, s.CPUSeconds,
				s.rate(), float64(s.Revisions)/s.CPUSeconds, s.Memory.RSS, parts, ratio)
		}
	}
}

// sideOf is the result of mode among sides.
func sideOf(sides []benchResult, mode string) benchResult {
	for _, s := range sides {
		if s.Mode == mode {
			return s
		}
	}
	panic("no side " + mode)
}

// runOursVerified restores with our restorer in a child process, then starts the restored member and
// compares its keyspace with the source's.
func runOursVerified(b *testing.B, w benchWorkload) benchResult {
	b.Helper()
	dataDir := filepath.Join(b.TempDir(), "data")
	r := runBenchChild(b, modeOurs, w.Root, dataDir)
	verifyRestored(b, modeOurs, w, dataDir)
	return r
}

// verifyRestored starts the member restored into dataDir, compares its keyspace (revision included) with
// the source's and removes the data directory.
func verifyRestored(b *testing.B, side string, w benchWorkload, dataDir string) {
	b.Helper()
	peer := etcdserver.FreeURL(b)
	m := etcdserver.StartMember(b, etcdserver.MemberConfig{Name: "m0", DataDir: dataDir, PeerURL: peer, InitialCluster: "m0=" + peer.String()})
	got := backuptest.StateAt(b, m.Client(b), 0)
	m.Stop()
	if diff := backuptest.Diff(w.Want, got); len(diff) > 0 {
		b.Fatalf("%s: restored keyspace differs from the source (%d differences):\n%s", side, len(diff), strings.Join(diff[:min(len(diff), 20)], "\n"))
	}
	if err := os.RemoveAll(dataDir); err != nil {
		b.Fatal(err)
	}
}

func runBenchChild(b *testing.B, mode, root, dataDir string) benchResult {
	b.Helper()
	cmd := exec.CommandContext(b.Context(), os.Args[0], "-test.run=^TestBenchRestoreChild$", "-test.timeout=60m")
	cmd.Env = append(os.Environ(), benchChildMode+"="+mode, benchChildStore+"="+root, benchChildDataDir+"="+dataDir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("%s child: %v\n%s", mode, err, out)
	}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), benchResultTag); ok {
			var r benchResult
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				b.Fatal(err)
			}
			return r
		}
	}
	b.Fatalf("%s child printed no result:\n%s", mode, out)
	return benchResult{}
}

// TestBenchRestoreChild is one side of BenchmarkRestore; it does nothing in a normal test run.
func TestBenchRestoreChild(t *testing.T) {
	mode, root, dataDir := os.Getenv(benchChildMode), os.Getenv(benchChildStore), os.Getenv(benchChildDataDir)
	if mode == "" {
		t.Skip("only run by BenchmarkRestore")
	}
	store, err := openLocalStore(t.Context(), root)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	peer := etcdserver.FreeURL(t)
	stopProfile := startBenchProfile(t, mode)
	sampler := benchproc.StartSampler(20 * time.Millisecond)
	start, startCPU := time.Now(), cpuSeconds(t)
	var r benchResult
	switch mode {
	case modeOurs:
		res, err := restorer.Restore(t.Context(), restorer.Options{Store: store, DataDir: dataDir, Name: "m0", ClusterToken: "bench",
			InitialCluster: "m0=" + peer.String(), InitialAdvertisePeerURLs: []string{peer.String()}, Log: logr.Discard()})
		if err != nil {
			t.Fatal(err)
		}
		r = benchResult{Revisions: res.AppliedRevisions, Final: res.Revision}
	case modeTxn:
		r = baselineRestore(t, store, dataDir, peer.String())
	case modeDecompress:
		r = decompressDeltas(t, store)
	default:
		t.Fatalf("unknown mode %q", mode)
	}
	r.Mode, r.Seconds, r.CPUSeconds = mode, time.Since(start).Seconds(), cpuSeconds(t)-startCPU
	if r.Memory, err = sampler.Stop(); err != nil {
		t.Fatal(err)
	}
	stopProfile(r.Revisions)
	line, _ := json.Marshal(r)
	fmt.Println(benchResultTag + string(line))
}

// decompressDeltas fetches and decompresses every delta of the latest stream into nothing: the
// least work any restore of them does.
func decompressDeltas(t *testing.T, store snapstore.SnapStore) benchResult {
	ctx := t.Context()
	snaps, err := store.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stream, err := snapshot.LatestStream(snaps)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range stream.Deltas {
		raw, err := store.Fetch(ctx, d)
		if err != nil {
			t.Fatal(err)
		}
		dec, err := snapshot.NewDecompressor(raw, d.Compression())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, dec); err != nil {
			t.Fatal(err)
		}
		_, _ = dec.Close(), raw.Close()
	}
	return benchResult{Revisions: stream.LastRevision() - stream.Full.LastRevision, Final: stream.LastRevision()}
}

// startBenchProfile starts a CPU profile of our side when benchProfileEnv is set; the returned
// function stops it and writes a heap profile.
func startBenchProfile(t *testing.T, mode string) func(revisions int64) {
	prefix := os.Getenv(benchProfileEnv)
	if prefix == "" || mode != modeOurs {
		return func(int64) {}
	}
	cpu := prefix + ".tmp.cpu"
	f, err := os.Create(cpu)
	if err != nil {
		t.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		t.Fatal(err)
	}
	return func(revisions int64) {
		pprof.StopCPUProfile()
		_ = f.Close()
		name := prefix + "." + strconv.FormatInt(revisions, 10)
		if err := os.Rename(cpu, name+".cpu"); err != nil {
			t.Fatal(err)
		}
		h, err := os.Create(name + ".heap")
		if err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		if err := pprof.Lookup("allocs").WriteTo(h, 0); err != nil {
			t.Fatal(err)
		}
		_ = h.Close()
	}
}

func cpuSeconds(t *testing.T) float64 {
	s, err := benchproc.CPUSeconds()
	if err != nil {
		t.Fatal(err)
	}
	return s
}
