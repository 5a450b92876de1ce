package snapstore

import (
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
)

// testStagedSave: the object appears under the name known only after the upload, and neither a failed
// source nor a failed naming leaves a snapshot or a staging object behind.
func testStagedSave(t *testing.T, h harness) {
	store := h.open(t, "staged", UploadOptions{ChunkSize: 5 << 20, MaxParallelChunks: 2})
	stager, ok := store.(StagedSaver)
	if !ok {
		t.Fatalf("%T does not implement StagedSaver", store)
	}
	data := fullSnapshotBytes(64<<10, 7)
	var consumed bool
	snap, err := stager.SaveStaged(t.Context(), &readTracker{r: bytes.NewReader(data), eof: &consumed}, func() (*snapshot.Snapshot, error) {
		if !consumed {
			t.Error("name called before the source was exhausted")
		}
		return snapshot.NewFull(42, time.Unix(1700000000, 0), snapshot.CompressionNone, false), nil
	})
	if err != nil {
		t.Fatalf("SaveStaged: %v", err)
	}
	if got := keys(list(t, store)); len(got) != 1 || got[0] != snap.RelativeKey() {
		t.Fatalf("listed %v, want only %s", got, snap.RelativeKey())
	}
	if !bytes.Equal(fetch(t, store, snap), data) {
		t.Fatal("staged object differs from the source")
	}
	assertOnlyObjects(t, h, store, 1)

	boom := errors.New("revision unknown")
	_, err = stager.SaveStaged(t.Context(), bytes.NewReader(data), func() (*snapshot.Snapshot, error) { return nil, boom })
	if !errors.Is(err, boom) {
		t.Fatalf("SaveStaged with failing name: err = %v", err)
	}
	_, err = stager.SaveStaged(t.Context(), io.MultiReader(bytes.NewReader(data), errAfter{boom}), func() (*snapshot.Snapshot, error) {
		t.Error("name called for a failed upload")
		return nil, nil
	})
	if !errors.Is(err, boom) {
		t.Fatalf("SaveStaged with failing source: err = %v", err)
	}
	assertOnlyObjects(t, h, store, 1)
	if err := store.Delete(t.Context(), snap); err != nil {
		t.Fatal(err)
	}
	h.assertNoLeftovers(t, store)
}

// testExpectedSave: a confirmed name is stored straight under its key (nothing staged); a name the bytes
// contradict, a failing naming or a failing source leave no object at all.
func testExpectedSave(t *testing.T, h harness) {
	store := h.open(t, "expected", UploadOptions{ChunkSize: 5 << 20, MaxParallelChunks: 2})
	stager := store.(StagedSaver)
	data := fullSnapshotBytes(64<<10, 9)
	created := time.Unix(1700000000, 0)
	expected := snapshot.NewFull(42, created, snapshot.CompressionNone, false)
	var consumed bool
	snap, err := stager.SaveExpected(t.Context(), &readTracker{r: bytes.NewReader(data), eof: &consumed}, expected, func() (*snapshot.Snapshot, error) {
		if !consumed {
			t.Error("name called before the source was exhausted")
		}
		return snapshot.NewFull(42, created, snapshot.CompressionNone, false), nil
	})
	if err != nil {
		t.Fatalf("SaveExpected: %v", err)
	}
	if got := keys(list(t, store)); len(got) != 1 || got[0] != expected.RelativeKey() || snap.RelativeKey() != expected.RelativeKey() {
		t.Fatalf("listed %v, want only %s", got, expected.RelativeKey())
	}
	if !bytes.Equal(fetch(t, store, snap), data) {
		t.Fatal("stored object differs from the source")
	}
	assertOnlyObjects(t, h, store, 1)

	other := snapshot.NewFull(43, created.Add(time.Minute), snapshot.CompressionNone, false)
	_, err = stager.SaveExpected(t.Context(), bytes.NewReader(data), other, func() (*snapshot.Snapshot, error) {
		return snapshot.NewFull(44, created.Add(time.Minute), snapshot.CompressionNone, false), nil
	})
	if !errors.Is(err, ErrUnexpectedName) {
		t.Fatalf("SaveExpected with contradicting bytes: err = %v, want ErrUnexpectedName", err)
	}
	boom := errors.New("revision unknown")
	if _, err = stager.SaveExpected(t.Context(), bytes.NewReader(data), other, func() (*snapshot.Snapshot, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("SaveExpected with failing name: err = %v", err)
	}
	_, err = stager.SaveExpected(t.Context(), io.MultiReader(bytes.NewReader(data), errAfter{boom}), other, func() (*snapshot.Snapshot, error) {
		t.Error("name called for a failed upload")
		return nil, nil
	})
	if !errors.Is(err, boom) {
		t.Fatalf("SaveExpected with failing source: err = %v", err)
	}
	assertOnlyObjects(t, h, store, 1)
	if err := store.Delete(t.Context(), snap); err != nil {
		t.Fatal(err)
	}
	h.assertNoLeftovers(t, store)
}

// assertOnlyObjects checks the store's whole location (staging area included) holds want objects.
func assertOnlyObjects(t *testing.T, h harness, store SnapStore, want int) {
	t.Helper()
	var n int
	if h.allObjects != nil {
		n = len(h.allObjects(t, store))
	} else {
		for _, err := range listAll(t, store.(*blobStore)) {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
	}
	if n != want {
		t.Fatalf("location holds %d objects, want %d", n, want)
	}
}

func listAll(t *testing.T, s *blobStore) map[string]error {
	t.Helper()
	out := map[string]error{}
	it := s.bucket.List(nil)
	for {
		obj, err := it.Next(t.Context())
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if !obj.IsDir && !strings.HasSuffix(obj.Key, "/") {
			out[obj.Key] = nil
		}
	}
}

type readTracker struct {
	r   io.Reader
	eof *bool
}

func (r *readTracker) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if errors.Is(err, io.EOF) {
		*r.eof = true
	}
	return n, err
}

// testStagedUploadSweep: a sweep deletes the staged uploads of its own prefix last modified before its
// cutoff and before a later full snapshot is listed, here those of saves whose deletion of the staged
// upload failed after the copy, and nothing else: not the snapshots, not objects below staging/ that a
// save does not name so, not another prefix's staged upload. Swift stages nothing.
func testStagedUploadSweep(t *testing.T, h harness) {
	a, b := h.sharedOpen(t, "sweep/etcd-main"), h.sharedOpen(t, "sweep/etcd-main-2")
	if _, ok := a.(*blobStore); !ok {
		t.Skipf("%T stages no upload", a)
	}
	start := time.Now().Add(-time.Minute)
	data := fullSnapshotBytes(128, 1)
	saveLeavingStaged := func(store SnapStore, rev int64) *snapshot.Snapshot {
		t.Helper()
		blob := store.(*blobStore)
		deleteObject := blob.deleteObject
		blob.deleteObject = func(context.Context, string) error { return errors.New("the store did not answer the deletion") }
		defer func() { blob.deleteObject = deleteObject }()
		snap, err := blob.SaveStaged(t.Context(), bytes.NewReader(data), func() (*snapshot.Snapshot, error) {
			return snapshot.NewFull(rev, time.Unix(1700000000, 0), snapshot.CompressionNone, false), nil
		})
		if err != nil {
			t.Fatalf("SaveStaged: %v", err)
		}
		return snap
	}
	first := saveLeavingStaged(a, 5)
	saveLeavingStaged(b, 6)
	h.putRaw(t, "sweep/etcd-main/staging/notes.txt", []byte("not an upload"))
	h.putRaw(t, "sweep/etcd-main/staging/nested/1700000000000000000", []byte("not where a save stages"))
	sweep := func(store SnapStore, olderThan time.Time) SweptUploads {
		t.Helper()
		swept, err := store.(UploadSweeper).SweepAbandonedUploads(t.Context(), olderThan)
		if err != nil {
			t.Fatalf("sweep: %v", err)
		}
		return swept
	}
	later := time.Now().Add(time.Hour)
	if swept := sweep(a, later); swept.Deleted != 0 {
		t.Fatalf("a sweep deleted %+v while no later full snapshot is stored", swept)
	}
	// A full snapshot taken after the staged uploads were written.
	second := snapshot.NewFull(7, time.Now().Add(time.Minute), snapshot.CompressionNone, false)
	save(t, a, second, data)
	save(t, b, snapshot.NewFull(8, time.Now().Add(time.Minute), snapshot.CompressionNone, false), data)
	if swept := sweep(a, start); swept.Deleted != 0 {
		t.Fatalf("a sweep deleted %+v written after its cutoff", swept)
	}
	if swept := sweep(a, later); swept.Deleted != 1 {
		t.Fatalf("sweep: %+v, want the one staged upload of its prefix deleted", swept)
	}
	if swept := sweep(a, later); swept.Deleted != 0 {
		t.Fatalf("a second sweep deleted %+v", swept)
	}
	if swept := sweep(b, later); swept.Deleted != 1 {
		t.Fatalf("the other prefix's sweep: %+v, want its staged upload, which the first sweep must have left", swept)
	}
	want := []string{first.RelativeKey(), second.RelativeKey()}
	if got := keys(list(t, a)); !slices.Equal(got, want) || !bytes.Equal(fetch(t, a, first), data) {
		t.Fatalf("after the sweeps the store lists %v, want %v", got, want)
	}
}
