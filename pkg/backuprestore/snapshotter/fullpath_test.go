package snapshotter_test

import (
	"context"
	"io"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
	"github.com/gardener-etcd/gardener-etcd/test/support/backuptest"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

// uploadPathSpy passes a real store through and counts which upload path full snapshots take.
// mispredict makes every SaveExpected expect one revision more than the snapshotter predicted, as a
// write slipping in unnoticed would.
type uploadPathSpy struct {
	snapstore.SnapStore
	stager           snapstore.StagedSaver
	staged, expected atomic.Int32
	mispredict       bool
}

// reset forgets the uploads so far (the snapshotter's first full snapshot at start).
func (p *uploadPathSpy) reset() { p.staged.Store(0); p.expected.Store(0) }

func spyOn(store *backuptest.Store, mispredict bool) (*backuptest.Store, *uploadPathSpy) {
	spy := &uploadPathSpy{SnapStore: store.SnapStore, stager: store.SnapStore.(snapstore.StagedSaver), mispredict: mispredict}
	wrapped := *store
	wrapped.SnapStore = spy
	return &wrapped, spy
}

func (p *uploadPathSpy) SaveStaged(ctx context.Context, r io.Reader, name func() (*snapshot.Snapshot, error)) (*snapshot.Snapshot, error) {
	p.staged.Add(1)
	return p.stager.SaveStaged(ctx, r, name)
}

func (p *uploadPathSpy) SaveExpected(ctx context.Context, r io.Reader, expected *snapshot.Snapshot, name func() (*snapshot.Snapshot, error)) (*snapshot.Snapshot, error) {
	p.expected.Add(1)
	if p.mispredict {
		expected = snapshot.NewFull(expected.LastRevision+1, expected.CreatedOn, snapshot.CompressionGzip, expected.IsFinal)
	}
	return p.stager.SaveExpected(ctx, r, expected, name)
}

// fullSnapshotAfterWrites writes 50 keys into a new etcd backed up to store, forgets the uploads of the
// snapshotter's start and takes one full snapshot; it returns it with the revision of the last write.
func fullSnapshotAfterWrites(t *testing.T, store *backuptest.Store, spy *uploadPathSpy) (*snapshot.Snapshot, int64) {
	t.Helper()
	cli := etcdserver.Start(t).Client(t)
	s := start(t, cli, store, nil, nil)
	rev := putN(t, cli, "k", 50, 100)
	spy.reset()
	full, err := s.TakeFull(t.Context(), false)
	if err != nil {
		t.Fatal(err)
	}
	return full, rev
}

// A full snapshot of an etcd that nobody writes to knows its revision before the first byte and is
// uploaded straight to its key: no staged object, no server-side copy.
func TestFullSnapshotOfAQuietEtcdGoesStraightToItsKey(t *testing.T) {
	store, spy := spyOn(backuptest.S3(t), false)
	full, rev := fullSnapshotAfterWrites(t, store, spy)
	if full.LastRevision != rev {
		t.Fatalf("full snapshot %s, want revision %d", full.SnapName, rev)
	}
	if spy.expected.Load() != 1 || spy.staged.Load() != 0 {
		t.Fatalf("uploads: %d straight, %d staged; want the one straight to its key", spy.expected.Load(), spy.staged.Load())
	}
}

// When the predicted name turns out wrong, nothing is stored under it and the snapshot is taken again,
// staged, under the name its bytes give.
func TestMispredictedFullSnapshotIsTakenAgainStaged(t *testing.T) {
	store, spy := spyOn(backuptest.Local(t), true)
	full, rev := fullSnapshotAfterWrites(t, store, spy)
	if full.LastRevision != rev || spy.expected.Load() != 1 || spy.staged.Load() != 1 {
		t.Fatalf("full snapshot %s after %d straight and %d staged uploads; want revision %d after one of each",
			full.SnapName, spy.expected.Load(), spy.staged.Load(), rev)
	}
	var fulls []string
	stored := false
	for _, snap := range listStore(t, store) {
		if snap.Kind == snapshot.KindFull {
			fulls = append(fulls, snap.SnapName)
			stored = stored || snap.SnapName == full.SnapName
			if snap.LastRevision > rev {
				t.Errorf("%s is stored under the mispredicted revision", snap.SnapName)
			}
		}
	}
	if !stored {
		t.Fatalf("full snapshots in the store: %v, %s missing", fulls, full.SnapName)
	}
}

// Under a steady stream of writes every full snapshot is named by the revision of its bytes, whichever
// path it took, and never names a revision that was not written yet.
func TestFullSnapshotsUnderWritesAreNamedByTheirBytes(t *testing.T) {
	cli := etcdserver.Start(t).Client(t)
	store, spy := spyOn(backuptest.S3(t), false)
	s := start(t, cli, store, nil, nil)
	putN(t, cli, "k", 20, 100)
	spy.reset()
	var lastAcked atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			resp, err := cli.Put(context.WithoutCancel(t.Context()), "busy", "v")
			if err != nil {
				t.Error(err)
				return
			}
			lastAcked.Store(resp.Header.Revision)
		}
	})
	var previous int64
	for range 5 {
		full, err := s.TakeFull(t.Context(), false)
		if err != nil {
			close(stop)
			wg.Wait()
			t.Fatal(err)
		}
		if full.LastRevision < previous {
			t.Errorf("full snapshot %s goes back behind revision %d", full.SnapName, previous)
		}
		previous = full.LastRevision
	}
	close(stop)
	wg.Wait()
	if previous > lastAcked.Load()+1 {
		t.Fatalf("the last full snapshot names revision %d, beyond the last write at %d", previous, lastAcked.Load())
	}
	if got := spy.expected.Load() + spy.staged.Load(); got != 5 {
		t.Fatalf("%d uploads for 5 full snapshots", got)
	}
	t.Logf("under writes: %d uploads straight to the key, %d staged", spy.expected.Load(), spy.staged.Load())
}
