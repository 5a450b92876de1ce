package snapshotter

import (
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// etcdbr_snapshot_duration_seconds has the upstream sidecar's buckets (client_golang's defaults), so that
// Gardener's panels over its buckets read the same under either sidecar.
func TestSnapshotDurationHasTheUpstreamBuckets(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := NewMetrics(reg)
	m.failed("Full", time.Second)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "etcdbr_snapshot_duration_seconds" {
			continue
		}
		var bounds []float64
		for _, b := range f.GetMetric()[0].GetHistogram().GetBucket() {
			bounds = append(bounds, b.GetUpperBound())
		}
		if !slices.Equal(bounds, prometheus.DefBuckets) {
			t.Fatalf("buckets = %v, want %v", bounds, prometheus.DefBuckets)
		}
		return
	}
	t.Fatal("etcdbr_snapshot_duration_seconds not gathered")
}
