package snapstore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
)

func openLocalForTest(t *testing.T, root, container, prefix string, upload UploadOptions) SnapStore {
	t.Helper()
	store, err := New(t.Context(), Config{
		Provider:  druidv1alpha1.StorageProviderLocal,
		Container: container,
		Prefix:    prefix,
		LocalRoot: root,
		Upload:    upload,
	}, testr.New(t))
	if err != nil {
		t.Fatalf("New Local store: %v", err)
	}
	t.Cleanup(func() { _ = store.Close() })
	return store
}

func TestLocalConformance(t *testing.T) {
	shared := t.TempDir()
	const container = "bkp"
	runConformance(t, harness{
		open: func(t *testing.T, prefix string, upload UploadOptions) SnapStore {
			return openLocalForTest(t, t.TempDir(), container, prefix, upload)
		},
		sharedOpen: func(t *testing.T, prefix string) SnapStore {
			return openLocalForTest(t, shared, container, prefix, UploadOptions{})
		},
		putRaw: func(t *testing.T, key string, data []byte) {
			path := filepath.Join(shared, container, filepath.FromSlash(key))
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
		},
		rewrite: func(t *testing.T, store SnapStore, key string, edit func([]byte) []byte) {
			rewriteFile(t, filepath.Join(store.(*blobStore).location, filepath.FromSlash(key)), edit)
		},
		assertNoLeftovers: func(t *testing.T, store SnapStore) {
			var files []string
			err := filepath.WalkDir(store.(*blobStore).location, func(path string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					files = append(files, path)
				}
				return err
			})
			if err != nil || len(files) != 0 {
				t.Fatalf("store directory holds %v (%v) after a failed upload", files, err)
			}
		},
	})
}

// The upstream layout: HOME=/x, container bkp, prefix etcd-main → /x/bkp/etcd-main/v2/<name>; the
// container defaults to default.bkp.
func TestLocalStoreRootIsHomeContainerPrefix(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	snap := snapshot.NewFull(3, time.Unix(1700000000, 0), snapshot.CompressionGzip, false)
	for container, dir := range map[string]string{"bkp": "bkp", "": DefaultLocalContainer} {
		store, err := New(t.Context(), Config{Provider: druidv1alpha1.StorageProviderLocal, Container: container, Prefix: "etcd-main"}, testr.New(t))
		if err != nil {
			t.Fatal(err)
		}
		save(t, store, snap, compress(t, fullSnapshotBytes(64, 1), snapshot.CompressionGzip))
		_ = store.Close()
		want := filepath.Join(home, dir, "etcd-main", "v2", snap.SnapName)
		if _, err := os.Stat(want); err != nil {
			t.Fatalf("container %q: snapshot not at %s: %v", container, want, err)
		}
		entries, err := os.ReadDir(filepath.Dir(want))
		if err != nil || len(entries) != 1 {
			t.Fatalf("container %q: v2 directory holds %v (%v), want only the snapshot (no attribute or temp files)", container, entries, err)
		}
	}
}

// A Local prefix names a directory below the container; one that leaves it, or that fileblob would
// store under an escaped name the listing does not walk, is refused when the store opens.
func TestLocalStoreRefusesPrefixesOutsideItsDirectory(t *testing.T) {
	for _, prefix := range []string{"../etcd-main", "bkp/../../etcd-main", "etcd\tmain", "etcd../main", "shoot..", "a__0x41__b"} {
		_, err := New(t.Context(), Config{Provider: druidv1alpha1.StorageProviderLocal, Container: "bkp", Prefix: prefix, LocalRoot: t.TempDir()}, testr.New(t))
		if err == nil || !strings.Contains(err.Error(), "local store prefix") {
			t.Errorf("prefix %q: err = %v, want a refusal naming the local store prefix", prefix, err)
		}
	}
}
