package snapshotter_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshotter"
	"github.com/gardener-etcd/gardener-etcd/test/support/metricstest"
)

// etcdbr_snapshot_gc_total, etcdbr_snapshot_gc_locked and etcdbr_snapshotter_failure exist at 0 from the start, as in the upstream
// sidecar, so that rate() over them sees the first garbage collection or failure.
func TestGCAndFailureSeriesStartAtZero(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	snapshotter.NewMetrics(reg)
	for _, kind := range []string{"Full", "Incr"} {
		for _, ok := range []string{"true", "false"} {
			labels := map[string]string{"kind": kind, "succeeded": ok}
			if got := metricstest.Value(t, reg, "etcdbr_snapshot_gc_total", labels); got != 0 {
				t.Errorf("etcdbr_snapshot_gc_total%v = %v, want 0", labels, got)
			}
		}
	}
	for _, kind := range []string{"Full", "Incr"} {
		if got := metricstest.Value(t, reg, "etcdbr_snapshot_gc_locked", map[string]string{"kind": kind}); got != 0 {
			t.Errorf("etcdbr_snapshot_gc_locked{kind=%q} = %v, want 0", kind, got)
		}
	}
	for _, op := range []string{"", "Full", "Incr", "GC"} {
		if got := metricstest.Value(t, reg, "etcdbr_snapshotter_failure", map[string]string{"error": op}); got != 0 {
			t.Errorf("etcdbr_snapshotter_failure{error=%q} = %v, want 0", op, got)
		}
	}
}
