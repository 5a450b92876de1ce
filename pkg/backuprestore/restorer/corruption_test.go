package restorer_test

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-logr/logr"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/restorer"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/test/support/backuptest"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

// restoreOptions restores into dataDir as a single member.
func restoreOptions(store *backuptest.Store, dataDir string, t *testing.T) restorer.Options {
	peer := etcdserver.FreeURL(t)
	return restorer.Options{Store: store.SnapStore, DataDir: dataDir, Name: "m0", ClusterToken: "tok",
		InitialCluster: "m0=" + peer.String(), InitialAdvertisePeerURLs: []string{peer.String()}, Log: logr.Discard()}
}

func TestCorruptedObjectIsRejectedAndDataDirUntouched(t *testing.T) {
	for _, newStore := range backuptest.Kinds {
		store := newStore(t)
		t.Run(store.Name, func(t *testing.T) {
			src := etcdserver.Start(t).Client(t)
			s := newSnapshotter(t, src, store, logr.Discard())
			// Two deltas: a corrupted second one is found after the first was replayed (into the work
			// directory only).
			for d := range 2 {
				for i := range 20 {
					if _, err := src.Put(t.Context(), fmt.Sprintf("k%d", i), strings.Repeat("v", 100+d)); err != nil {
						t.Fatal(err)
					}
				}
				takeDelta(t, s)
			}
			s.Stop()
			snaps, err := store.List(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			stream, err := snapshot.LatestStream(snaps)
			if err != nil || stream.Full == nil || len(stream.Deltas) != 2 {
				t.Fatalf("stream = %+v, %v", stream, err)
			}
			for _, victim := range []*snapshot.Snapshot{stream.Deltas[0], stream.Deltas[1], stream.Full} {
				backuptest.FlipMiddleByte(t, store, victim)

				parent := t.TempDir()
				absent := filepath.Join(parent, "absent")
				_, err = restorer.Restore(t.Context(), restoreOptions(store, absent, t))
				if err == nil || !strings.Contains(err.Error(), victim.SnapName) {
					t.Fatalf("corrupted %s: err = %v, want an error naming it", victim.SnapName, err)
				}
				if _, statErr := os.Stat(absent); !errors.Is(statErr, os.ErrNotExist) {
					t.Fatalf("the data dir exists after a failed restore: %v", statErr)
				}
				empty := filepath.Join(parent, "empty")
				if err := os.Mkdir(empty, 0o700); err != nil {
					t.Fatal(err)
				}
				if _, err := restorer.Restore(t.Context(), restoreOptions(store, empty, t)); err == nil {
					t.Fatalf("corrupted %s: restore into an empty dir succeeded", victim.SnapName)
				}
				if entries, _ := os.ReadDir(parent); len(entries) != 1 { // only "empty": no work dir left
					t.Fatalf("left behind in %s: %v", parent, entries)
				}
				if entries, _ := os.ReadDir(empty); len(entries) != 0 {
					t.Fatalf("the empty data dir was written to: %v", entries)
				}
				backuptest.FlipMiddleByte(t, store, victim) // repair for the next victim
			}
			// Repaired, the store restores again, proving the failures were the corruption's.
			if _, err := restorer.Restore(t.Context(), restoreOptions(store, filepath.Join(t.TempDir(), "ok"), t)); err != nil {
				t.Fatalf("restore after repair: %v", err)
			}
		})
	}
}

func TestRestoreRefusesNonEmptyDataDir(t *testing.T) {
	store := backuptest.Local(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "keep"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := restorer.Restore(t.Context(), restoreOptions(store, dir, t))
	if err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("err = %v, want a refusal", err)
	}
	if _, err := restorer.Restore(t.Context(), restoreOptions(store, filepath.Join(dir, "new"), t)); !errors.Is(err, restorer.ErrNoSnapshots) {
		t.Fatalf("empty store: err = %v, want ErrNoSnapshots", err)
	}
}

func mustURL(t *testing.T, s string) url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return *u
}
