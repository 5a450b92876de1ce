package snapstore

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshotformat"
)

// harness adapts the conformance suite to one provider.
type harness struct {
	// open returns a store on a fresh, empty location (a new container directory or bucket) with prefix.
	open func(t *testing.T, prefix string, upload UploadOptions) SnapStore
	// sharedOpen returns a store with prefix on the same location as every other sharedOpen call of
	// the test, to check prefix isolation.
	sharedOpen func(t *testing.T, prefix string) SnapStore
	// putRaw writes an object below the shared location bypassing the store (legacy v1 objects,
	// foreign objects).
	putRaw func(t *testing.T, key string, data []byte)
	// rewrite replaces a stored object's contents with edit(contents) in the backend, bypassing the
	// store: how the tests corrupt and truncate objects behind the store's back.
	rewrite func(t *testing.T, store SnapStore, key string, edit func([]byte) []byte)
	// assertNoLeftovers checks the backend holds no staging data of failed uploads (temporary files,
	// unfinished multipart uploads).
	assertNoLeftovers func(t *testing.T, store SnapStore)
	// assertChunked checks the object was uploaded in parts (nil when the provider has no parts).
	assertChunked func(t *testing.T, store SnapStore, key string)
	// allObjects lists every object of the store's location, staging and segments included; nil for
	// stores on gocloud.dev buckets, which are listed through the bucket.
	allObjects func(t *testing.T, store SnapStore) []string
	// largeObjectSize, if set, replaces largeObjectSize() for an emulator too slow for the default.
	largeObjectSize int64
}

// runConformance is the behaviour every provider must show.
func runConformance(t *testing.T, h harness) {
	t.Run("save list fetch delete round trip", func(t *testing.T) { testRoundTrip(t, h) })
	t.Run("prefixes are isolated and foreign objects ignored", func(t *testing.T) { testPrefixIsolation(t, h) })
	t.Run("a prefix with empty segments names the location its cleaned form names", func(t *testing.T) { testEmptySegmentPrefix(t, h) })
	t.Run("legacy v1 layout is listed and read but not written", func(t *testing.T) { testV1ReadOnly(t, h) })
	t.Run("large object is streamed", func(t *testing.T) { testLargeObject(t, h) })
	t.Run("failed source leaves no object", func(t *testing.T) { testFailedSave(t, h) })
	t.Run("corrupted objects are detected", func(t *testing.T) { testCorruption(t, h) })
	t.Run("staged save is named after the upload", func(t *testing.T) { testStagedSave(t, h) })
	t.Run("abandoned staged uploads are swept", func(t *testing.T) { testStagedUploadSweep(t, h) })
	t.Run("expected save completes only when the bytes confirm the name", func(t *testing.T) { testExpectedSave(t, h) })
	t.Run("listing is sorted by last revision across pages and layouts", func(t *testing.T) { testListingOrder(t, h) })
	t.Run("truncated objects are detected", func(t *testing.T) { testTruncation(t, h) })
	t.Run("objects named as the upstream sidecar names them are listed and read", func(t *testing.T) { testUpstreamLayout(t, h) })
}

// fullSnapshotBytes makes contents in the full-snapshot format: a payload and its sha256 trailer.
func fullSnapshotBytes(size int, seed byte) []byte {
	data := bytes.Repeat([]byte{seed, seed + 1, seed + 2, 0}, size/4)
	sum := sha256.Sum256(data)
	return append(data, sum[:]...)
}

// deltaBytes encodes n put events of revisions start.. as a delta snapshot.
func deltaBytes(t *testing.T, start int64, n int, c snapshot.Compression) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, err := snapshot.NewCompressor(&buf, c)
	if err != nil {
		t.Fatal(err)
	}
	enc := snapshotformat.NewDeltaEncoder(zw)
	for i := range int64(n) {
		rev := start + i
		ev := &mvccpb.Event{Type: mvccpb.PUT, Kv: &mvccpb.KeyValue{Key: []byte("/registry/k"), Value: []byte{byte(rev)}, ModRevision: rev, CreateRevision: start, Version: i + 1}}
		if err := enc.Encode(ev, time.Unix(1700000000, 0)); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func compress(t *testing.T, data []byte, c snapshot.Compression) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, err := snapshot.NewCompressor(&buf, c)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = zw.Write(data)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func save(t *testing.T, s SnapStore, snap *snapshot.Snapshot, data []byte) {
	t.Helper()
	if err := s.Save(t.Context(), snap, bytes.NewReader(data)); err != nil {
		t.Fatalf("Save %s: %v", snap, err)
	}
}

func fetch(t *testing.T, s SnapStore, snap *snapshot.Snapshot) []byte {
	t.Helper()
	rc, err := s.Fetch(t.Context(), snap)
	if err != nil {
		t.Fatalf("Fetch %s: %v", snap, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("reading %s: %v", snap, err)
	}
	return data
}

func list(t *testing.T, s SnapStore) []*snapshot.Snapshot {
	t.Helper()
	snaps, err := s.List(t.Context())
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	return snaps
}

func keys(snaps []*snapshot.Snapshot) []string {
	out := []string{}
	for _, s := range snaps {
		out = append(out, s.RelativeKey())
	}
	return out
}

func testRoundTrip(t *testing.T, h harness) {
	store := h.open(t, "shoot--dev--a/etcd-main", UploadOptions{})
	if got := list(t, store); len(got) != 0 {
		t.Fatalf("new store lists %v", keys(got))
	}
	now := time.Unix(1700000000, 0)
	full := snapshot.NewFull(100, now, snapshot.CompressionGzip, false)
	d1 := snapshot.NewIncr(101, 110, now.Add(time.Minute), snapshot.CompressionGzip)
	d2 := snapshot.NewIncr(111, 112, now.Add(2*time.Minute), snapshot.CompressionNone)
	contents := map[string][]byte{
		full.SnapName: compress(t, fullSnapshotBytes(64<<10, 7), snapshot.CompressionGzip),
		d1.SnapName:   deltaBytes(t, 101, 10, snapshot.CompressionGzip),
		d2.SnapName:   deltaBytes(t, 111, 2, snapshot.CompressionNone),
	}
	for _, s := range []*snapshot.Snapshot{d2, full, d1} { // order of saving must not matter
		save(t, store, s, contents[s.SnapName])
	}

	listed := list(t, store)
	if want := []string{"v2/" + full.SnapName, "v2/" + d1.SnapName, "v2/" + d2.SnapName}; !slices.Equal(keys(listed), want) {
		t.Fatalf("List = %v, want %v", keys(listed), want)
	}
	for i, want := range []*snapshot.Snapshot{full, d1, d2} {
		got := listed[i]
		if got.Kind != want.Kind || got.StartRevision != want.StartRevision || got.LastRevision != want.LastRevision ||
			!got.CreatedOn.Equal(want.CreatedOn) || got.Compression() != want.Compression() || got.Prefix != "shoot--dev--a/etcd-main" {
			t.Fatalf("listed %+v, saved %+v", got, want)
		}
		if data := fetch(t, store, got); !bytes.Equal(data, contents[want.SnapName]) {
			t.Fatalf("Fetch %s returned %d bytes differing from the %d saved", got, len(data), len(contents[want.SnapName]))
		}
	}
	stream, err := snapshot.LatestStream(listed)
	if err != nil || stream.Full.SnapName != full.SnapName || len(stream.Deltas) != 2 || stream.LastRevision() != 112 {
		t.Fatalf("LatestStream = %+v, %v", stream, err)
	}
	rc, err := store.Fetch(t.Context(), listed[1])
	if err != nil {
		t.Fatal(err)
	}
	delta, err := snapshotformat.OpenDelta(rc, listed[1], 0)
	_ = rc.Close()
	if err != nil {
		t.Fatalf("OpenDelta of a fetched delta: %v", err)
	}
	if events, err := delta.All(); err != nil || len(events) != 10 || events[9].EtcdEvent.Kv.ModRevision != 110 {
		t.Fatalf("fetched delta events: %d, %v", len(events), err)
	}

	if err := store.Delete(t.Context(), d1); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if want := []string{"v2/" + full.SnapName, "v2/" + d2.SnapName}; !slices.Equal(keys(list(t, store)), want) {
		t.Fatalf("after Delete, List = %v, want %v", keys(list(t, store)), want)
	}
	if _, err := store.Fetch(t.Context(), d1); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Fetch of deleted snapshot: err = %v, want ErrNotFound", err)
	}
	if err := store.Delete(t.Context(), d1); err != nil {
		t.Fatalf("deleting a missing snapshot must succeed: %v", err)
	}
}

func testPrefixIsolation(t *testing.T, h harness) {
	a := h.sharedOpen(t, "bkp/etcd-main")
	b := h.sharedOpen(t, "bkp/etcd-main-2")
	now := time.Unix(1700000000, 0)
	save(t, a, snapshot.NewFull(5, now, snapshot.CompressionNone, false), fullSnapshotBytes(128, 1))
	save(t, b, snapshot.NewFull(9, now, snapshot.CompressionNone, false), fullSnapshotBytes(128, 2))
	h.putRaw(t, "bkp/etcd-main/v2/README.txt", []byte("not a snapshot"))
	h.putRaw(t, "bkp/etcd-main/v2/Full-00000000-00000007-1700000000.bz2", []byte("unknown codec"))
	h.putRaw(t, "bkp/etcd-main/v2/nested/Full-00000000-00000008-1700000000", []byte("wrong depth"))
	h.putRaw(t, "bkp/etcd-main/other/Full-00000000-00000006-1700000000", []byte("not below v2"))

	if got, want := keys(list(t, a)), []string{"v2/Full-00000000-00000005-1700000000"}; !slices.Equal(got, want) {
		t.Fatalf("prefix etcd-main lists %v, want %v", got, want)
	}
	if got, want := keys(list(t, b)), []string{"v2/Full-00000000-00000009-1700000000"}; !slices.Equal(got, want) {
		t.Fatalf("prefix etcd-main-2 lists %v, want %v", got, want)
	}
}

// Keys are joined as paths, as the upstream sidecar joins them: "bkp//etcd-main/" stores below
// "bkp/etcd-main", and a store opened with either prefix must list what the other saved.
func testEmptySegmentPrefix(t *testing.T, h harness) {
	odd := h.sharedOpen(t, "bkp//etcd-main/")
	clean := h.sharedOpen(t, "bkp/etcd-main")
	now := time.Unix(1700000000, 0)
	save(t, odd, snapshot.NewFull(5, now, snapshot.CompressionNone, false), fullSnapshotBytes(128, 1))
	save(t, clean, snapshot.NewIncr(6, 9, now, snapshot.CompressionNone), deltaBytes(t, 6, 4, snapshot.CompressionNone))
	want := []string{"v2/Full-00000000-00000005-1700000000", "v2/Incr-00000006-00000009-1700000000"}
	for prefix, store := range map[string]SnapStore{"bkp//etcd-main/": odd, "bkp/etcd-main": clean} {
		if got := keys(list(t, store)); !slices.Equal(got, want) {
			t.Fatalf("prefix %q lists %v, want %v", prefix, got, want)
		}
	}
}

func testV1ReadOnly(t *testing.T, h harness) {
	store := h.sharedOpen(t, "legacy/etcd-events")
	v1Full := "legacy/etcd-events/v1/Backup-1600000000/Full-00000000-00000050-1600000000"
	v1Incr := "legacy/etcd-events/v1/Backup-1600000000/Incr-00000051-00000060-1600000100.gz"
	fullData := fullSnapshotBytes(4096, 3)
	incrData := deltaBytes(t, 51, 10, snapshot.CompressionGzip)
	h.putRaw(t, v1Full, fullData)
	h.putRaw(t, v1Incr, incrData)
	v2Incr := snapshot.NewIncr(61, 70, time.Unix(1700000000, 0), snapshot.CompressionNone)
	save(t, store, v2Incr, deltaBytes(t, 61, 10, snapshot.CompressionNone))

	listed := list(t, store)
	want := []string{
		"v1/Backup-1600000000/Full-00000000-00000050-1600000000",
		"v1/Backup-1600000000/Incr-00000051-00000060-1600000100.gz",
		"v2/" + v2Incr.SnapName,
	}
	if !slices.Equal(keys(listed), want) {
		t.Fatalf("List = %v, want %v", keys(listed), want)
	}
	if listed[0].SnapDir != "Backup-1600000000" || listed[0].Layout() != snapshot.LayoutV1 {
		t.Fatalf("v1 snapshot listed as %+v", listed[0])
	}
	if !bytes.Equal(fetch(t, store, listed[0]), fullData) || !bytes.Equal(fetch(t, store, listed[1]), incrData) {
		t.Fatal("v1 objects fetched with different contents")
	}
	stream, err := snapshot.LatestStream(listed)
	if err != nil || stream.Full != listed[0] || len(stream.Deltas) != 2 || stream.LastRevision() != 70 {
		t.Fatalf("snap stream across v1 and v2 = %+v, %v", stream, err)
	}
	if err := store.Save(t.Context(), listed[0], bytes.NewReader(fullData)); !errors.Is(err, ErrReadOnlyLayout) {
		t.Fatalf("saving a v1 snapshot: err = %v, want ErrReadOnlyLayout", err)
	}
}

func testFailedSave(t *testing.T, h harness) {
	store := h.open(t, "failing", UploadOptions{ChunkSize: 5 << 20, MaxParallelChunks: 2})
	boom := errors.New("etcd snapshot stream broke")
	for _, size := range []int64{1 << 10, 12 << 20} { // one part and several parts
		snap := snapshot.NewFull(size, time.Unix(1700000000, 0), snapshot.CompressionNone, false)
		src := io.MultiReader(io.LimitReader(newGenerator(1), size), errAfter{boom})
		err := store.Save(t.Context(), snap, src)
		if !errors.Is(err, boom) || !strings.Contains(err.Error(), snap.SnapName) {
			t.Fatalf("Save with a failing source (%d bytes): err = %v, want the source error naming %s", size, err, snap.SnapName)
		}
		if got := list(t, store); len(got) != 0 {
			t.Fatalf("failed upload left %v", keys(got))
		}
		if _, err := store.Fetch(t.Context(), snap); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Fetch after failed upload: err = %v, want ErrNotFound", err)
		}
		h.assertNoLeftovers(t, store)
	}
}

type errAfter struct{ err error }

func (e errAfter) Read([]byte) (int, error) { return 0, e.err }

func testCorruption(t *testing.T, h harness) {
	store := h.open(t, "corrupt/etcd-main", UploadOptions{})
	now := time.Unix(1700000000, 0)
	for _, c := range []snapshot.Compression{snapshot.CompressionNone, snapshot.CompressionGzip} {
		full := snapshot.NewFull(10, now, c, false)
		delta := snapshot.NewIncr(11, 40, now, c)
		fullData := compress(t, fullSnapshotBytes(256<<10, 5), c)
		deltaData := deltaBytes(t, 11, 30, c)
		save(t, store, full, fullData)
		save(t, store, delta, deltaData)
		h.rewrite(t, store, full.Key("corrupt/etcd-main"), flipByteAt(int64(len(fullData)/2)))
		h.rewrite(t, store, delta.Key("corrupt/etcd-main"), flipByteAt(int64(len(deltaData)/2)))

		rc, err := store.Fetch(t.Context(), delta)
		if err != nil {
			t.Fatal(err)
		}
		_, err = snapshotformat.OpenDelta(rc, delta, 0)
		_ = rc.Close()
		if err == nil || !strings.Contains(err.Error(), delta.SnapName) {
			t.Fatalf("corrupted delta %s: err = %v, want an error naming it", delta, err)
		}
		if c == snapshot.CompressionNone && !errors.Is(err, snapshotformat.ErrChecksumMismatch) {
			t.Fatalf("corrupted uncompressed delta: err = %v, want ErrChecksumMismatch", err)
		}

		rc, err = store.Fetch(t.Context(), full)
		if err != nil {
			t.Fatal(err)
		}
		fr, err := snapshotformat.OpenFull(rc, full, false)
		if err == nil {
			_, err = io.Copy(io.Discard, fr)
			_ = fr.Close()
		}
		_ = rc.Close()
		if err == nil || !strings.Contains(err.Error(), full.SnapName) {
			t.Fatalf("corrupted full snapshot %s: err = %v, want an error naming it", full, err)
		}
		if c == snapshot.CompressionNone && !errors.Is(err, snapshotformat.ErrChecksumMismatch) {
			t.Fatalf("corrupted uncompressed full snapshot: err = %v, want ErrChecksumMismatch", err)
		}
	}
}

// flipByteAt is a rewrite edit that inverts some bits of the byte at offset.
func flipByteAt(offset int64) func([]byte) []byte {
	return func(data []byte) []byte {
		data[offset] ^= 0x10
		return data
	}
}

// rewriteFile is rewrite for backends that keep an object as a file.
func rewriteFile(t *testing.T, path string, edit func([]byte) []byte) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading the backend file of the object: %v", err)
	}
	if err := os.WriteFile(path, edit(data), 0o644); err != nil {
		t.Fatalf("rewriting the backend file of the object: %v", err)
	}
}
