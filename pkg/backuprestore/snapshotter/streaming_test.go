package snapshotter_test

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshotter"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
	"github.com/gardener-etcd/gardener-etcd/test/support/backuptest"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

// gatedFulls passes a real store through but holds every full snapshot upload until released, as a
// slow store would: the snapshot's stream from etcd stays open meanwhile. entered receives once an
// upload waits.
type gatedFulls struct {
	snapstore.SnapStore
	stager   snapstore.StagedSaver
	entered  chan struct{}
	released chan struct{}
}

func gateFulls(store *backuptest.Store) *gatedFulls {
	return &gatedFulls{SnapStore: store.SnapStore, stager: store.SnapStore.(snapstore.StagedSaver),
		entered: make(chan struct{}, 1), released: make(chan struct{})}
}

func (g *gatedFulls) wait(ctx context.Context) error {
	select {
	case g.entered <- struct{}{}:
	default:
	}
	select {
	case <-g.released:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *gatedFulls) SaveStaged(ctx context.Context, r io.Reader, name func() (*snapshot.Snapshot, error)) (*snapshot.Snapshot, error) {
	if err := g.wait(ctx); err != nil {
		return nil, err
	}
	return g.stager.SaveStaged(ctx, r, name)
}

func (g *gatedFulls) SaveExpected(ctx context.Context, r io.Reader, expected *snapshot.Snapshot, name func() (*snapshot.Snapshot, error)) (*snapshot.Snapshot, error) {
	if err := g.wait(ctx); err != nil {
		return nil, err
	}
	return g.stager.SaveExpected(ctx, r, expected, name)
}

// StreamingFull says whether a full snapshot streams from etcd: the NOSPACE recovery asks it, because
// the stream holds a read open on the member. It is true while a full snapshot's upload is held up, and
// false before and once the snapshot is stored.
func TestStreamingFullWhileAFullSnapshotIsUploaded(t *testing.T) {
	cli := etcdserver.Start(t).Client(t)
	rev := putN(t, cli, "k", 10, 100)
	store := backuptest.Local(t)
	gated := gateFulls(store)
	cfg := snapshotter.Default()
	cfg.Schedule, cfg.DeltaSnapshotPeriod, cfg.GarbageCollectionPeriod = "", 0, 0
	s, err := snapshotter.New(snapshotter.Options{Config: cfg, Client: cli, Store: gated, Log: logr.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	if s.StreamingFull() {
		t.Fatal("StreamingFull is true before any full snapshot")
	}

	taken := make(chan error, 1)
	go func() {
		_, err := s.TakeFull(t.Context(), false)
		taken <- err
	}()
	select {
	case <-gated.entered:
	case err := <-taken:
		t.Fatalf("the full snapshot ended before its upload was held up: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("no full snapshot upload started within a minute")
	}
	if !s.StreamingFull() {
		t.Fatal("StreamingFull is false while a full snapshot streams from etcd")
	}
	close(gated.released)
	if err := <-taken; err != nil {
		t.Fatal(err)
	}
	if s.StreamingFull() {
		t.Fatal("StreamingFull is still true after the full snapshot was stored")
	}
	if last := s.LastRevision(); last != rev {
		t.Fatalf("the stored full snapshot ends at revision %d, want %d", last, rev)
	}
}
