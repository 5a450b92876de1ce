package snapshotter_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshotter"
	"github.com/gardener-etcd/gardener-etcd/test/support/backuptest"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

// holdFulls holds every full snapshot upload of store until release is called, as a slow store would: the
// snapshot's stream from etcd stays open meanwhile. entered receives once an upload waits.
func holdFulls(store *backuptest.Store) (held *backuptest.Store, entered <-chan struct{}, release func()) {
	gate, entered, release := hold()
	return gateFulls(store, gate), entered, release
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
			held, entered, release := holdFulls(backuptest.Local(t))
			cfg := snapshotter.Default()
			cfg.Schedule, cfg.DeltaSnapshotPeriod, cfg.GarbageCollectionPeriod = "", 0, 0
			s, err := snapshotter.New(snapshotter.Options{Config: cfg, Client: cli, Store: held.SnapStore, Log: logr.Discard()})
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
			case <-entered:
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
				release()
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
