package netmetrics

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/gardener-etcd/gardener-etcd/test/support/metricstest"
)

const devSample = `Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo:    1000      10    0    0    0     0          0         0     1000      10    0    0    0     0       0          0
  eth0: 5000000    4000    0    0    0     0          0         0   250000    3000    0    0    0     0       0          0
`

// The counters are the sums over every interface (loopback included, as upstream), received bytes from
// the first column and transmitted bytes from the ninth.
func TestCountersSumEveryInterface(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dev")
	if err := os.WriteFile(path, []byte(devSample), 0o600); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(Collector{Path: path})

	if got := metricstest.Value(t, reg, "etcdbr_network_received_bytes", nil); got != 5001000 {
		t.Errorf("received = %v, want 5001000", got)
	}
	if got := metricstest.Value(t, reg, "etcdbr_network_transmitted_bytes", nil); got != 251000 {
		t.Errorf("transmitted = %v, want 251000", got)
	}
	want := `
# HELP etcdbr_network_received_bytes Bytes received over all interfaces of the pod's network namespace.
# TYPE etcdbr_network_received_bytes counter
etcdbr_network_received_bytes 5.001e+06
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "etcdbr_network_received_bytes"); err != nil {
		t.Error(err)
	}
}

// An unreadable or malformed file drops the two series from that scrape; the scrape itself succeeds.
func TestUnreadableFileYieldsNoSeries(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "dev")
	if err := os.WriteFile(bad, []byte("Inter-|\n lo: 12 x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(t.TempDir(), "missing"), bad} {
		reg := prometheus.NewPedanticRegistry()
		reg.MustRegister(Collector{Path: path})
		if n, err := testutil.GatherAndCount(reg); err != nil || n != 0 {
			t.Errorf("%s: %d series, error %v; want none and no error", path, n, err)
		}
	}
}

// On Linux the default file is this process's network namespace, and it has at least loopback.
func TestDefaultFileIsReadable(t *testing.T) {
	f, err := os.Open(DevFile)
	if err != nil {
		t.Skip("no procfs:", err)
	}
	defer f.Close()
	if _, _, err := Totals(f); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(Collector{})
	if n, err := testutil.GatherAndCount(reg); err != nil || n != 2 {
		t.Errorf("%d series, error %v; want 2", n, err)
	}
}
