package snapstore

import (
	"bytes"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
)

// A sweep deletes the uploads that no manifest uses and that nothing wrote to since its cutoff, and keeps
// everything else: the segments of every snapshot, uploads written after the cutoff, uploads of versions
// that recorded no key, and an upload whose key names another prefix.
func TestSwiftSweepDeletesOnlyAbandonedUploads(t *testing.T) {
	const chunk = 1 << 20
	const prefix = "sweep/etcd-main"
	f := newSwiftFixture(t)
	container := f.newContainer(t)
	store := f.open(t, container, prefix, UploadOptions{ChunkSize: chunk, MaxParallelChunks: 2})
	start := time.Now().Add(-time.Minute)

	live := snapshot.NewFull(10, time.Unix(1700000000, 0), snapshot.CompressionNone, false)
	liveData := fullSnapshotBytes(3*chunk+100, 1)
	save(t, store, live, liveData)
	small := snapshot.NewFull(11, time.Unix(1700000100, 0), snapshot.CompressionNone, false)
	save(t, store, small, []byte("one chunk is stored whole"))

	segments := path.Join(prefix, swiftSegmentsDir)
	upload := func(id string, withKey string) []string {
		dir := path.Join(segments, "20260101T000000.000000000Z-"+id)
		names := []string{path.Join(dir, "00000000"), path.Join(dir, "00000001")}
		if withKey != "" {
			names = append(names, path.Join(dir, swiftKeyObject))
		}
		for _, name := range names {
			content := "a segment"
			if path.Base(name) == swiftKeyObject {
				content = withKey
			}
			f.srv.PutObject(t, container, name, []byte(content))
		}
		return names
	}
	// What uploads leave behind when they are interrupted:
	abandoned := slices.Concat(
		// the process died before the manifest was sent: no key object;
		upload("DIEDEARLY0.keyed", ""),
		// the manifest was sent and never written;
		upload("NEVERWROTE.keyed", path.Join(prefix, "v2", "Full-00000000-00000099-1700000200")),
		// the key's object is a manifest, of another upload: this one's manifest was replaced;
		upload("REPLACED00.keyed", live.Key(prefix)),
		// the key's object was stored whole, replacing the manifest.
		upload("BECAMESMAL.keyed", small.Key(prefix)),
	)
	unkeyed := upload("OLDVERSION", "")
	foreign := upload("FOREIGNKEY.keyed", "other/etcd-main/v2/Full-00000000-00000099-1700000200")
	before := containerObjects(t, store)

	swept, err := store.SweepAbandonedUploads(t.Context(), start)
	if err != nil || swept.Deleted != 0 || swept.Unkeyed != 1 {
		t.Fatalf("sweep of uploads all written after its cutoff: %+v, %v; want nothing deleted and one unkeyed upload", swept, err)
	}
	if got := containerObjects(t, store); !slices.Equal(got, before) {
		t.Fatalf("a sweep with nothing old enough changed the container from %v to %v", before, got)
	}

	swept, err = store.SweepAbandonedUploads(t.Context(), time.Now().Add(time.Hour))
	if err == nil || !strings.Contains(err.Error(), "FOREIGNKEY") || !strings.Contains(err.Error(), "outside prefix") {
		t.Fatalf("sweep error %v, want one naming the upload whose key is outside the prefix", err)
	}
	if swept.Deleted != 4 || swept.Objects != len(abandoned) || swept.Unkeyed != 1 {
		t.Fatalf("sweep: %+v, want 4 uploads with %d objects deleted and one unkeyed upload", swept, len(abandoned))
	}
	want := slices.DeleteFunc(slices.Clone(before), func(name string) bool { return slices.Contains(abandoned, name) })
	if got := containerObjects(t, store); !slices.Equal(got, want) {
		t.Fatalf("after the sweep the container holds %v, want %v", got, want)
	}
	for _, kept := range slices.Concat(unkeyed, foreign) {
		if !slices.Contains(want, kept) {
			t.Fatalf("%s should have been kept", kept)
		}
	}
	if !bytes.Equal(fetch(t, store, live), liveData) {
		t.Fatal("the large snapshot reads other bytes after the sweep")
	}

	if swept, _ := store.SweepAbandonedUploads(t.Context(), time.Now().Add(time.Hour)); swept.Deleted != 0 {
		t.Fatalf("a second sweep deleted %+v", swept)
	}
	for _, s := range []*snapshot.Snapshot{live, small} {
		if err := store.Delete(t.Context(), s); err != nil {
			t.Fatal(err)
		}
	}
	leftAlone := slices.Sorted(slices.Values(slices.Concat(unkeyed, foreign)))
	if got := containerObjects(t, store); !slices.Equal(got, leftAlone) {
		t.Fatalf("after deleting the snapshots the container holds %v, want only the uploads a sweep leaves alone", got)
	}
}
