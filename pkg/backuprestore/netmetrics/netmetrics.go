// Package netmetrics exports the bytes the sidecar's pod sent and received, under the upstream
// etcd-backup-restore's names (etcdbr_network_transmitted_bytes, etcdbr_network_received_bytes), which
// Gardener's etcd dashboards plot. The containers of a pod share one network namespace, so the sidecar's
// view of it covers etcd's peer and client traffic too.
package netmetrics

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// DevFile lists the interfaces of the calling process's network namespace (Linux).
const DevFile = "/proc/self/net/dev"

var (
	transmitted = prometheus.NewDesc("etcdbr_network_transmitted_bytes",
		"Bytes transmitted over all interfaces of the pod's network namespace.", nil, nil)
	received = prometheus.NewDesc("etcdbr_network_received_bytes",
		"Bytes received over all interfaces of the pod's network namespace.", nil, nil)
)

// Collector reads the interface counters at each scrape, so the values are the kernel's, never a copy
// that could fall behind. A file that cannot be read or parsed yields no series in that scrape rather than
// failing the whole scrape (the upstream sidecar reports NaN then).
type Collector struct {
	// Path is the file to read; DevFile when empty (tests point it elsewhere).
	Path string
}

// Describe implements prometheus.Collector.
func (c Collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- transmitted
	ch <- received
}

// Collect implements prometheus.Collector.
func (c Collector) Collect(ch chan<- prometheus.Metric) {
	path := c.Path
	if path == "" {
		path = DevFile
	}
	f, err := os.Open(path) // #nosec G304 -- a fixed procfs file, or a test's
	if err != nil {
		return
	}
	defer f.Close()
	rx, tx, err := Totals(f)
	if err != nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(transmitted, prometheus.CounterValue, float64(tx))
	ch <- prometheus.MustNewConstMetric(received, prometheus.CounterValue, float64(rx))
}

// Totals sums the received and transmitted bytes of every interface in /proc/net/dev's format: two
// header lines, then "name: rx_bytes rx_packets … (8 receive fields) tx_bytes …". Loopback counts as
// well, as in the upstream sidecar, so both report the same numbers.
func Totals(r io.Reader) (rx, tx uint64, err error) {
	s := bufio.NewScanner(r)
	for s.Scan() {
		name, counters, ok := strings.Cut(s.Text(), ":")
		if !ok {
			continue // a header line
		}
		fields := strings.Fields(counters)
		if len(fields) < 9 {
			return 0, 0, fmt.Errorf("interface %s: %d counters, want at least 9", strings.TrimSpace(name), len(fields))
		}
		ifRx, err := strconv.ParseUint(fields[0], 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("interface %s: received bytes: %w", strings.TrimSpace(name), err)
		}
		ifTx, err := strconv.ParseUint(fields[8], 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("interface %s: transmitted bytes: %w", strings.TrimSpace(name), err)
		}
		rx, tx = rx+ifRx, tx+ifTx
	}
	return rx, tx, s.Err()
}
