package snapstore

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/test/support/s3server"
)

// generationOf reports the watched store's current generation and whether the one it started with has
// been closed, under the store's lock.
func generationOf(w *watchedStore, first *generation) (number int, firstClosed bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.current.number, first.retired && first.inUse == 0
}

func pollUntil(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestWatchedStoreUploadInFlightFinishesOnTheStoreItStartedOn swaps the secret while an upload is half
// sent: the store is reopened with the new keys at once, the upload completes on the old store, which
// is closed only afterwards, and the snapshot is in the bucket.
func TestWatchedStoreUploadInFlightFinishesOnTheStoreItStartedOn(t *testing.T) {
	srv := s3server.StartWithOptions(t, s3server.Options{IAM: true})
	srv.CreateBucket(t, "inflight")
	srv.CreateUser(t, "key-a", "secret-a")
	srv.CreateUser(t, "key-b", "secret-b")
	keys := func(access, secret string) map[string]string {
		return map[string]string{"accessKeyID": access, "secretAccessKey": secret, "region": srv.Region,
			"endpoint": srv.Endpoint, "s3ForcePathStyle": "true"}
	}
	dir := t.TempDir()
	linkSecret(t, dir, "..v1", keys("key-a", "secret-a"))
	opened, err := OpenWatched(t.Context(), Config{Provider: druidv1alpha1.StorageProviderS3, Container: "inflight", Prefix: "p",
		SecretDir: dir}, WatchOptions{PollInterval: 20 * time.Millisecond}, testr.New(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = opened.Close() })
	w := opened.(*watchedStore)
	first, err := w.acquire()
	if err != nil {
		t.Fatal(err)
	}
	w.release(first)

	pr, pw := io.Pipe()
	snap := snapshot.NewIncr(1, 2, time.Now(), snapshot.CompressionNone)
	saved := make(chan error, 1)
	go func() { saved <- w.Save(t.Context(), snap, pr) }()
	if _, err := pw.Write([]byte(strings.Repeat("x", 1024))); err != nil {
		t.Fatal(err)
	}

	linkSecret(t, dir, "..v2", keys("key-b", "secret-b"))
	pollUntil(t, 10*time.Second, "the reopen with key pair B", func() bool { n, _ := generationOf(w, first); return n == 1 })
	if _, closed := generationOf(w, first); closed {
		t.Fatal("the store the upload runs on was closed while the upload was in flight")
	}

	if _, err := pw.Write([]byte(strings.Repeat("y", 1024))); err != nil {
		t.Fatal(err)
	}
	_ = pw.Close()
	if err := <-saved; err != nil {
		t.Fatalf("upload in flight across the reopen: %v", err)
	}
	if _, closed := generationOf(w, first); !closed {
		t.Error("the replaced store is still open after its last upload ended, want it closed")
	}
	snaps, err := w.List(t.Context())
	if err != nil {
		t.Fatalf("listing with key pair B: %v", err)
	}
	if len(snaps) != 1 || snaps[0].SnapName != snap.SnapName {
		t.Errorf("store holds %v, want only %s", snaps, snap.SnapName)
	}
}
