package snapstore

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
)

// countingStore counts its Close calls and fails operations after the first.
type countingStore struct {
	SnapStore
	closes atomic.Int32
}

func (s *countingStore) List(context.Context) ([]*snapshot.Snapshot, error) {
	if s.closes.Load() > 0 {
		return nil, errors.New("list on a closed store")
	}
	return nil, nil
}

func (s *countingStore) Close() error {
	s.closes.Add(1)
	return nil
}

// watchedOver is a watched store around store without a watch loop.
func watchedOver(store SnapStore) *watchedStore {
	done := make(chan struct{})
	close(done)
	return &watchedStore{stop: func() {}, done: done, current: &generation{store: store}}
}

// TestWatchedStoreFailsFastAfterClose: after Close no operation reaches the store, every one fails with
// ErrClosed, and the store is closed exactly once, also when an operation was still running at Close.
func TestWatchedStoreFailsFastAfterClose(t *testing.T) {
	t.Run("idle", func(t *testing.T) {
		store := &countingStore{}
		w := watchedOver(store)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := w.List(t.Context()); !errors.Is(err, ErrClosed) {
			t.Errorf("List after Close: %v, want ErrClosed", err)
		}
		if _, err := w.Fetch(t.Context(), snapshot.NewIncr(1, 2, time.Now(), snapshot.CompressionNone)); !errors.Is(err, ErrClosed) {
			t.Errorf("Fetch after Close: %v, want ErrClosed", err)
		}
		if err := w.Save(t.Context(), snapshot.NewIncr(1, 2, time.Now(), snapshot.CompressionNone), nil); !errors.Is(err, ErrClosed) {
			t.Errorf("Save after Close: %v, want ErrClosed", err)
		}
		if err := w.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		if n := store.closes.Load(); n != 1 {
			t.Errorf("store closed %d times, want once", n)
		}
	})
	t.Run("operation in flight", func(t *testing.T) {
		store := &countingStore{}
		w := watchedOver(store)
		g, err := w.acquire()
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if n := store.closes.Load(); n != 0 {
			t.Fatalf("store closed %d times while an operation runs on it, want not yet", n)
		}
		if _, err := w.List(t.Context()); !errors.Is(err, ErrClosed) {
			t.Errorf("List after Close: %v, want ErrClosed", err)
		}
		w.release(g)
		if _, err := w.acquire(); !errors.Is(err, ErrClosed) {
			t.Errorf("acquire after Close: %v, want ErrClosed", err)
		}
		if n := store.closes.Load(); n != 1 {
			t.Errorf("store closed %d times, want once, after its last operation", n)
		}
	})
}

// TestReopenBackoff: waits double from the poll interval up to the cap, and a secret with another
// digest is tried at once and counts from the start.
func TestReopenBackoff(t *testing.T) {
	b := reopenBackoff{base: time.Second, max: 10 * time.Second}
	now := time.Now()
	d1, d2 := [32]byte{1}, [32]byte{2}
	var got []time.Duration
	for range 6 {
		if !b.due(d1, now) {
			t.Fatalf("attempt after %v not due at the end of its wait", got)
		}
		wait := b.failed(d1, now)
		got = append(got, wait)
		if b.due(d1, now.Add(wait-time.Millisecond)) {
			t.Fatalf("attempt due before its wait %s ended", wait)
		}
		now = now.Add(wait)
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second}
	if !equalDurations(got, want) {
		t.Errorf("waits %v, want %v", got, want)
	}
	if !b.due(d2, now.Add(-time.Second)) {
		t.Error("a secret with another digest is not due at once")
	}
	if wait := b.failed(d2, now); wait != time.Second {
		t.Errorf("first wait with another digest %s, want the base 1s", wait)
	}
	b.reset()
	if !b.due(d2, now) {
		t.Error("not due after a reset")
	}
}

func equalDurations(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestWatchedStoreBacksOffFailedReopens rotates a Local store's secret to a bucketName that cannot be
// a container: with a 10 ms poll, failures are logged about log2(elapsed/10ms) times, not once a poll;
// a further change of the secret is tried at once.
func TestWatchedStoreBacksOffFailedReopens(t *testing.T) {
	dir := t.TempDir()
	linkSecret(t, dir, "..v1", map[string]string{"bucketName": "good"})
	var logs capturedLogs
	opened, err := OpenWatched(t.Context(), Config{Provider: druidv1alpha1.StorageProviderLocal, LocalRoot: t.TempDir(), SecretDir: dir},
		WatchOptions{PollInterval: 10 * time.Millisecond}, logs.logger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = opened.Close() })
	const failed = "could not be reopened"
	linkSecret(t, dir, "..v2", map[string]string{"bucketName": "bad/one"})
	pollUntil(t, 10*time.Second, "the first failed reopen", func() bool { return logs.count(failed) > 0 })
	time.Sleep(700 * time.Millisecond)
	// Attempts at about 0, 10, 30, 70, 150, 310, 630 ms: 7; once a poll would be about 70.
	if n := logs.count(failed); n > 12 {
		t.Errorf("%d failed reopens logged in 700ms with a 10ms poll, want backoff (about 7)", n)
	}
	before := logs.count(failed)
	linkSecret(t, dir, "..v3", map[string]string{"bucketName": "bad/two"})
	pollUntil(t, 2*time.Second, "an attempt with the changed secret", func() bool { return logs.count(failed) > before })
	if n := logs.count(`"failedAttempts"=1`); n < 2 {
		t.Errorf("%d failures logged as first attempts, want the count to restart with the changed secret:\n%s", n, logs.all())
	}
}
