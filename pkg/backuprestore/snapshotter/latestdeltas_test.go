package snapshotter_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshotter"
	"github.com/gardener-etcd/gardener-etcd/test/support/backuptest"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

// etcdbr_snapstore_latest_deltas_total and …_revisions_total count the deltas after the latest full
// snapshot, as the upstream sidecar does: each delta adds to them, a full snapshot resets them, and a term
// that resumes from the store counts the deltas it finds there.
func TestLatestDeltasCountTheStreamSinceTheLatestFull(t *testing.T) {
	cli := etcdserver.Start(t).Client(t)
	store := backuptest.Local(t)
	expect := func(registry *prometheus.Registry, when string, deltas, revisions float64) {
		t.Helper()
		gotDeltas := metricValue(t, registry, "etcdbr_snapstore_latest_deltas_total", nil)
		gotRevisions := metricValue(t, registry, "etcdbr_snapstore_latest_deltas_revisions_total", nil)
		if gotDeltas != deltas || gotRevisions != revisions {
			t.Fatalf("%s: latest_deltas_total=%v latest_deltas_revisions_total=%v, want %v and %v", when, gotDeltas, gotRevisions, deltas, revisions)
		}
	}

	registry := prometheus.NewRegistry()
	first := startWithMetrics(t, cli, store, nil, nil, snapshotter.NewMetrics(registry))
	expect(registry, "after the first full snapshot", 0, 0)
	for _, writes := range []int{3, 2} {
		watchedUpTo(t, first, putN(t, cli, "k", writes, 10))
		if _, err := first.TakeDelta(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	expect(registry, "after two deltas of 3 and 2 revisions", 2, 5)
	first.Stop()

	resumedRegistry := prometheus.NewRegistry()
	second := startWithMetrics(t, cli, store, nil, nil, snapshotter.NewMetrics(resumedRegistry))
	expect(resumedRegistry, "after a new term resumed the stream", 2, 5)
	// The latest snapshots are known from the start of the term, before it uploads anything: the age of the
	// latest backup, which Gardener's alerts compute, has a series even if every upload of the term fails.
	for _, kind := range []string{"Full", "Incr"} {
		for _, name := range []string{"etcdbr_snapshot_latest_timestamp", "etcdbr_snapshot_latest_revision"} {
			labels := map[string]string{"kind": kind}
			if got, want := metricValue(t, resumedRegistry, name, labels), metricValue(t, registry, name, labels); got != want || want == 0 {
				t.Fatalf("resumed term: %s{kind=%s} = %v, want the store's %v", name, kind, got, want)
			}
		}
	}

	if _, err := second.TakeFull(t.Context(), false); err != nil {
		t.Fatal(err)
	}
	expect(resumedRegistry, "after a full snapshot", 0, 0)
}
