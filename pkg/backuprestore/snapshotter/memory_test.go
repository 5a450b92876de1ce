package snapshotter_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshotter"
	"github.com/gardener-etcd/gardener-etcd/test/support/backuptest"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
	"github.com/gardener-etcd/gardener-etcd/test/support/metricstest"
)

// stall holds every delta upload until the returned release is called, as a slow or unreachable store
// would.
func stall(store *backuptest.Store) (*backuptest.Store, func()) {
	gate, _, release := hold()
	return gateDeltas(store, gate), release
}

// failDeltas fails every delta upload while the returned flag is true (it starts true).
func failDeltas(store *backuptest.Store) (*backuptest.Store, *atomic.Bool) {
	failing := &atomic.Bool{}
	failing.Store(true)
	return gateDeltas(store, func(context.Context) error {
		if failing.Load() {
			return errors.New("store unavailable")
		}
		return nil
	}), failing
}

// While the store does not take a delta, the events it holds and those buffered after it stay within
// the delta memory limit: the watch pauses (etcdbr_snapshot_delta_watch_paused 1) instead of buffering
// every write, and once the store takes the delta it resumes where it paused — every revision ends up in
// the store, in deltas without a gap.
func TestDeltaWatchPausesAtTheMemoryLimitWhileTheStoreStalls(t *testing.T) {
	cli := etcdserver.Start(t).Client(t)
	store, release := stall(backuptest.Local(t))
	registry := prometheus.NewRegistry()
	const limit = 32 << 10
	s := startWithMetrics(t, cli, store, func(c *snapshotter.Config) { c.DeltaSnapshotMemoryLimit = limit }, nil, snapshotter.NewMetrics(registry))
	paused := func() float64 { return metricstest.Value(t, registry, "etcdbr_snapshot_delta_watch_paused", nil) }
	if got := paused(); got != 0 {
		t.Fatalf("etcdbr_snapshot_delta_watch_paused = %v before any write", got)
	}

	// The writes are about 70 times the limit. The watch pauses once the events held reach it, after the
	// watch response that took them there; a watch response holds up to 1,000 revisions (etcd batches a
	// watcher that fell behind), so at most that many more events are held than the limit allows.
	const smallest = 2 + 200 + 256 // key, value and per-event overhead as the buffer counts them
	rev := putN(t, cli, "m", 5000, 200)
	held := s.WatchedRevision() - s.LastRevision()
	t.Logf("holding %d events after the writes (store at revision %d, watched %d, written %d)", held, s.LastRevision(), s.WatchedRevision(), rev)
	if held > limit/smallest+1000 {
		t.Fatalf("the snapshotter holds %d events, more than the %d-byte limit and one watch response allow", held, limit)
	}
	eventually(t, 30*time.Second, "the delta watch to pause", func() bool { return paused() == 1 })

	release()
	eventually(t, 30*time.Second, "the delta watch to resume", func() bool { return paused() == 0 })
	if _, err := s.TakeDelta(t.Context()); err != nil {
		t.Fatal(err)
	}
	expectDeltasUpTo(t, store, rev)
}

// A term that ends because the cluster lost its quorum while the watch pauses stores the revisions the
// watch had not delivered too: Flush stores the buffer, then reads them from the local member, which has
// no leader, and stores them in deltas of their own.
func TestFlushStoresWhatAPausedWatchLeftInALeaderlessMember(t *testing.T) {
	cluster := etcdserver.StartCluster(t, 3, nil)
	local := cluster.Members[0]
	cli := local.Client(t)
	store, release := stall(backuptest.Local(t))
	registry := prometheus.NewRegistry()
	s := startWithMetrics(t, cli, store, func(c *snapshotter.Config) { c.DeltaSnapshotMemoryLimit = 32 << 10 }, nil, snapshotter.NewMetrics(registry))
	rev := putN(t, cli, "m", 500, 200)
	eventually(t, 30*time.Second, "the delta watch to pause", func() bool {
		return metricstest.Value(t, registry, "etcdbr_snapshot_delta_watch_paused", nil) == 1
	})
	for _, m := range cluster.Members[1:] {
		m.Stop()
	}
	s.Stop()
	if s.WatchedRevision() >= rev {
		t.Fatalf("the watch delivered revision %d of %d before it paused; nothing is left to read", s.WatchedRevision(), rev)
	}
	release()
	last, err := s.Flush(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if last == nil || last.LastRevision != rev {
		t.Fatalf("Flush stored %v last; want a delta ending at revision %d", last, rev)
	}
	expectDeltasUpTo(t, store, rev)
}

// A delta upload that fails while the watch pauses leaves the events held at the limit; the snapshotter
// tries the cut again without waiting for its period (an hour here) and resumes the watch once the store
// takes it.
func TestPausedWatchResumesAfterAFailedUploadOnceTheStoreIsBack(t *testing.T) {
	cli := etcdserver.Start(t).Client(t)
	store, failing := failDeltas(backuptest.Local(t))
	registry := prometheus.NewRegistry()
	s := startWithMetrics(t, cli, store, func(c *snapshotter.Config) { c.DeltaSnapshotMemoryLimit = 32 << 10 }, nil, snapshotter.NewMetrics(registry))
	paused := func() float64 { return metricstest.Value(t, registry, "etcdbr_snapshot_delta_watch_paused", nil) }
	rev := putN(t, cli, "m", 500, 200)
	eventually(t, 30*time.Second, "the delta watch to pause", func() bool { return paused() == 1 })
	failing.Store(false)
	eventually(t, time.Minute, "the delta watch to resume", func() bool { return paused() == 0 })
	if _, err := s.TakeDelta(t.Context()); err != nil {
		t.Fatal(err)
	}
	if s.LastRevision() != rev {
		t.Fatalf("stored revision %d, want %d", s.LastRevision(), rev)
	}
}

// expectDeltasUpTo checks that the store's latest snap stream ends at rev, in two deltas or more, without
// a gap.
func expectDeltasUpTo(t *testing.T, store *backuptest.Store, rev int64) {
	t.Helper()
	stream, err := snapshot.LatestStream(listStore(t, store))
	if err != nil {
		t.Fatal(err)
	}
	if stream.LastRevision() != rev || len(stream.Dropped) != 0 || len(stream.Deltas) < 2 {
		t.Fatalf("stream ends at revision %d with %d deltas and %d dropped; want revision %d in two deltas or more, without a gap",
			stream.LastRevision(), len(stream.Deltas), len(stream.Dropped), rev)
	}
}
