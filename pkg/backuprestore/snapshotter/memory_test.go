package snapshotter_test

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshotter"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
	"github.com/gardener-etcd/gardener-etcd/test/support/backuptest"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
	"github.com/gardener-etcd/gardener-etcd/test/support/metricstest"
)

// stallingStore passes a real store through but holds every delta upload until release is closed, as a
// slow or unreachable store would.
type stallingStore struct {
	snapstore.SnapStore
	stager  snapstore.StagedSaver
	release chan struct{}
}

func stall(store *backuptest.Store) (*backuptest.Store, *stallingStore) {
	st := &stallingStore{SnapStore: store.SnapStore, stager: store.SnapStore.(snapstore.StagedSaver), release: make(chan struct{})}
	wrapped := *store
	wrapped.SnapStore = st
	return &wrapped, st
}

func (s *stallingStore) Save(ctx context.Context, snap *snapshot.Snapshot, r io.Reader) error {
	if snap.Kind == snapshot.KindIncr {
		select {
		case <-s.release:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return s.SnapStore.Save(ctx, snap, r)
}

func (s *stallingStore) SaveStaged(ctx context.Context, r io.Reader, name func() (*snapshot.Snapshot, error)) (*snapshot.Snapshot, error) {
	return s.stager.SaveStaged(ctx, r, name)
}

func (s *stallingStore) SaveExpected(ctx context.Context, r io.Reader, expected *snapshot.Snapshot, name func() (*snapshot.Snapshot, error)) (*snapshot.Snapshot, error) {
	return s.stager.SaveExpected(ctx, r, expected, name)
}

// While the store does not take a delta, the events it holds and those buffered after it stay within
// the delta memory limit: the watch pauses (etcdbr_snapshot_delta_watch_paused 1) instead of buffering
// every write, and once the store takes the delta it resumes where it paused — every revision ends up in
// the store, in deltas without a gap.
func TestDeltaWatchPausesAtTheMemoryLimitWhileTheStoreStalls(t *testing.T) {
	cli := etcdserver.Start(t).Client(t)
	store, stalling := stall(backuptest.Local(t))
	registry := prometheus.NewRegistry()
	const limit = 32 << 10
	s := startWithMetrics(t, cli, store, func(c *snapshotter.Config) { c.DeltaSnapshotMemoryLimit = limit }, nil, snapshotter.NewMetrics(registry))
	paused := func() float64 { return metricstest.Value(t, registry, "etcdbr_snapshot_delta_watch_paused", nil) }
	if got := paused(); got != 0 {
		t.Fatalf("etcdbr_snapshot_delta_watch_paused = %v before any write", got)
	}

	// Events of 2+200+256 to 5+200+256 bytes as the buffer counts them (key, value, overhead): the writes
	// are about 28 times the limit.
	const smallest, largest = 458, 461
	rev := putN(t, cli, "m", 2000, 200)
	eventually(t, 30*time.Second, "the delta watch to pause", func() bool { return paused() == 1 })
	held := s.WatchedRevision() - s.LastRevision()
	t.Logf("paused holding %d events (store at revision %d, watched %d, written %d)", held, s.LastRevision(), s.WatchedRevision(), rev)
	if held*smallest > limit+largest {
		t.Fatalf("the snapshotter holds %d events (at least %d bytes), over the %d-byte limit by more than one event", held, held*smallest, limit)
	}

	close(stalling.release)
	eventually(t, 30*time.Second, "the delta watch to resume", func() bool { return paused() == 0 })
	if _, err := s.TakeDelta(t.Context()); err != nil {
		t.Fatal(err)
	}
	stream, err := snapshot.LatestStream(listStore(t, store))
	if err != nil {
		t.Fatal(err)
	}
	if stream.LastRevision() != rev || len(stream.Dropped) != 0 || len(stream.Deltas) < 2 {
		t.Fatalf("stream ends at revision %d with %d deltas and %d dropped; want revision %d in deltas without a gap",
			stream.LastRevision(), len(stream.Deltas), len(stream.Dropped), rev)
	}
}
