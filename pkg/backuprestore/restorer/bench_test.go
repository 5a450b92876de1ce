package restorer_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/restorer"
	"github.com/gardener-etcd/gardener-etcd/test/etcdserver"
)

// Each side of the benchmark runs in its own process (this test binary, re-executed) so that its
// peak RSS is its own.
const (
	benchChildMode  = "GARDENER_ETCD_BENCH_RESTORE_MODE"
	benchChildStore = "GARDENER_ETCD_BENCH_RESTORE_STORE"
	benchResultTag  = "BENCH-RESULT "
)

type benchResult struct {
	Mode      string  `json:"mode"`
	Seconds   float64 `json:"seconds"`
	Revisions int64   `json:"revisions"`
	Final     int64   `json:"final"`
	PeakRSSKB int64   `json:"peakRSSKB"`
}

// BenchmarkRestore compares our restore of a full snapshot + delta revisions with the deployed
// sidecar's approach (one transaction per revision through an embedded etcd), end to end: both start
// from the store and end with a data directory at the last revision. Run with
//
//	go test ./pkg/backuprestore/restorer -run '^$' -bench BenchmarkRestore -benchtime 1x -timeout 60m
func BenchmarkRestore(b *testing.B) {
	root := b.TempDir()
	revisions := benchRevisions()
	start := time.Now()
	stream := generateBenchStore(b, root, revisions)
	b.Logf("generated %s + %d deltas up to revision %d in %s", stream.Full.SnapName, len(stream.Deltas), stream.LastRevision(), time.Since(start).Round(time.Second))
	var ours, base benchResult
	for b.Loop() {
		ours = runBenchChild(b, "ours", root)
		base = runBenchChild(b, "baseline", root)
	}
	for _, r := range []benchResult{ours, base} {
		if r.Final != stream.LastRevision() {
			b.Fatalf("%s ended at revision %d, want %d", r.Mode, r.Final, stream.LastRevision())
		}
	}
	oursRate, baseRate := float64(ours.Revisions)/ours.Seconds, float64(base.Revisions)/base.Seconds
	b.ReportMetric(oursRate, "ours-rev/s")
	b.ReportMetric(baseRate, "baseline-rev/s")
	b.ReportMetric(oursRate/baseRate, "speedup")
	b.ReportMetric(float64(ours.PeakRSSKB)/1024, "ours-peakRSS-MiB")
	b.ReportMetric(float64(base.PeakRSSKB)/1024, "baseline-peakRSS-MiB")
	fmt.Printf("restore of %d delta revisions (%d keys, %d-byte values):\n", ours.Revisions, benchKeys, benchValueSize)
	fmt.Printf("  ours:     %8.2fs %10.0f rev/s  peak RSS %6.0f MiB\n", ours.Seconds, oursRate, float64(ours.PeakRSSKB)/1024)
	fmt.Printf("  baseline: %8.2fs %10.0f rev/s  peak RSS %6.0f MiB\n", base.Seconds, baseRate, float64(base.PeakRSSKB)/1024)
	fmt.Printf("  speedup:  %.1fx\n", oursRate/baseRate)
}

func runBenchChild(b *testing.B, mode, root string) benchResult {
	b.Helper()
	cmd := exec.CommandContext(b.Context(), os.Args[0], "-test.run=^TestBenchRestoreChild$", "-test.timeout=60m")
	cmd.Env = append(os.Environ(), benchChildMode+"="+mode, benchChildStore+"="+root)
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
	mode, root := os.Getenv(benchChildMode), os.Getenv(benchChildStore)
	if mode == "" {
		t.Skip("only run by BenchmarkRestore")
	}
	store, err := openLocalStore(t.Context(), root)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	dataDir := filepath.Join(t.TempDir(), "data")
	peer := etcdserver.FreeURL(t)
	start := time.Now()
	var r benchResult
	switch mode {
	case "ours":
		res, err := restorer.Restore(t.Context(), restorer.Options{Store: store, DataDir: dataDir, Name: "m0", ClusterToken: "bench",
			InitialCluster: "m0=" + peer.String(), InitialAdvertisePeerURLs: []string{peer.String()}, Log: logr.Discard()})
		if err != nil {
			t.Fatal(err)
		}
		r = benchResult{Revisions: res.AppliedRevisions, Final: res.Revision}
	case "baseline":
		r = baselineRestore(t, store, dataDir, peer.String())
	}
	r.Mode, r.Seconds, r.PeakRSSKB = mode, time.Since(start).Seconds(), peakRSSKB(t)
	line, _ := json.Marshal(r)
	fmt.Println(benchResultTag + string(line))
}

func peakRSSKB(t *testing.T) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb
		}
	}
	return 0
}
