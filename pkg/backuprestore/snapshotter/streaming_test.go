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

// FullStreamOpenSince says since when a full snapshot streams from etcd: the NOSPACE recovery asks it,
// because the stream holds a read open on the member. While a full snapshot's upload is held up it gives
// a time no later than the stream's start; before, once the snapshot is stored, and once a failed one
// ended, it gives none.
func TestFullStreamOpenSinceWhileAFullSnapshotIsUploaded(t *testing.T) {
	cli := etcdserver.Start(t).Client(t)
	rev := putN(t, cli, "k", 10, 100)
	for _, tc := range []struct {
		name   string
		stored bool
	}{
		{name: "stored", stored: true},
		{name: "failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gated := gateFulls(backuptest.Local(t))
			cfg := snapshotter.Default()
			cfg.Schedule, cfg.DeltaSnapshotPeriod, cfg.GarbageCollectionPeriod = "", 0, 0
			s, err := snapshotter.New(snapshotter.Options{Config: cfg, Client: cli, Store: gated, Log: logr.Discard()})
			if err != nil {
				t.Fatal(err)
			}
			if _, open := s.FullStreamOpenSince(); open {
				t.Fatal("a stream is open before any full snapshot")
			}

			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			called := time.Now()
			taken := make(chan error, 1)
			go func() {
				_, err := s.TakeFull(ctx, false)
				taken <- err
			}()
			select {
			case <-gated.entered:
			case err := <-taken:
				t.Fatalf("the full snapshot ended before its upload was held up: %v", err)
			case <-time.After(time.Minute):
				t.Fatal("no full snapshot upload started within a minute")
			}
			since, open := s.FullStreamOpenSince()
			if !open {
				t.Fatal("no stream is open while a full snapshot streams from etcd")
			}
			if since.Before(called) || since.After(time.Now()) {
				t.Fatalf("the stream is open since %s, not between TakeFull's call (%s) and now", since, called)
			}

			if tc.stored {
				close(gated.released)
				if err := <-taken; err != nil {
					t.Fatal(err)
				}
				if last := s.LastRevision(); last != rev {
					t.Fatalf("the stored full snapshot ends at revision %d, want %d", last, rev)
				}
			} else {
				cancel()
				if err := <-taken; err == nil {
					t.Fatal("the full snapshot succeeded although its upload was cancelled")
				}
			}
			if _, open := s.FullStreamOpenSince(); open {
				t.Fatal("a stream is still open after the full snapshot ended")
			}
		})
	}
}
