package snapstore

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshotformat"
)

// testListingOrder: snapshots written in random order, in both layouts, are listed sorted by last
// revision (numerically, also past eight digits), then start revision, then creation time, whether the
// provider returns them in one page or in many.
func testListingOrder(t *testing.T, h harness) {
	const prefix = "order/etcd-main"
	store := h.sharedOpen(t, prefix)
	// want is the listing order; each entry is a relative key.
	want := []string{
		"v1/Backup-1600000000/Full-00000000-00000010-1600000000",
		"v1/Backup-1600000000/Incr-00000011-00000020-1600000060.gz",
		"v2/Full-00000000-00000021-1600000100.gz", // v2 continues the v1 stream
	}
	for i := range 11 {
		start := 22 + int64(i)*10
		want = append(want, snapshot.NewIncr(start, start+9, time.Unix(1600000200+int64(i)*60, 0), snapshot.CompressionGzip).RelativeKey())
	}
	want = append(want,
		// a full snapshot sorts before a delta ending at the same revision, the later of two fulls last
		"v2/Full-00000000-00000141-1600001000.gz",
		"v2/Full-00000000-00000141-1600002000.gz.final",
		"v2/Incr-00000132-00000141-1600000900.gz",
		// a ninth digit: 100000000 sorts after 99999999, unlike the names
		"v2/Full-00000000-99999999-1600003000",
		"v2/Full-00000000-100000000-1600003100.zlib",
		"v2/Incr-99999999-100000000-1600003060",
		"v1/Backup-1600000000/Full-00000000-100000001-1600003200",
	)
	for _, i := range rand.New(rand.NewPCG(1, 2)).Perm(len(want)) {
		rel := want[i]
		snap, err := snapshot.ParseRelativeKey(rel)
		if err != nil {
			t.Fatal(err)
		}
		if snap.Layout() == snapshot.LayoutV1 {
			h.putRaw(t, prefix+"/"+rel, []byte(rel))
		} else {
			save(t, store, snap, []byte(rel))
		}
	}
	if got := keys(list(t, store)); !slices.Equal(got, want) {
		t.Fatalf("List = %v\nwant %v", got, want)
	}
	// The same in pages of three objects: the provider's continuation tokens are followed in both layouts.
	setListPageSize(t, store, 3)
	if got := keys(list(t, store)); !slices.Equal(got, want) {
		t.Fatalf("List in pages of 3 = %v\nwant %v", got, want)
	}
}

// testTruncation: an object cut short behind the store's back is fetched short, and the snapshot format's
// checksum rejects it, naming the snapshot, wherever the cut is.
func testTruncation(t *testing.T, h harness) {
	const prefix = "truncated/etcd-main"
	store := h.open(t, prefix, UploadOptions{})
	now := time.Unix(1700000000, 0)
	for _, c := range []snapshot.Compression{snapshot.CompressionNone, snapshot.CompressionGzip} {
		full := snapshot.NewFull(10, now, c, false)
		delta := snapshot.NewIncr(11, 40, now, c)
		contents := map[*snapshot.Snapshot][]byte{
			full:  compress(t, fullSnapshotBytes(64<<10, 5), c),
			delta: deltaBytes(t, 11, 30, c),
		}
		for snap, data := range contents {
			save(t, store, snap, data)
			for _, size := range []int{len(data) - 1, len(data) / 2, 10} {
				h.rewrite(t, store, snap.Key(prefix), func(d []byte) []byte { return d[:size] })
				fetched := fetch(t, store, snap)
				if !bytes.Equal(fetched, data[:size]) {
					t.Fatalf("%s cut to %d bytes: fetched %d bytes, want the first %d saved", snap, size, len(fetched), size)
				}
				err := openSnapshot(t, store, snap)
				if err == nil || !strings.Contains(err.Error(), snap.SnapName) {
					t.Fatalf("%s cut to %d of %d bytes: err = %v, want an error naming it", snap, size, len(data), err)
				}
				wantErr := snapshotformat.ErrChecksumMismatch
				if size < 32 {
					wantErr = snapshotformat.ErrTruncated
				}
				if c == snapshot.CompressionNone && !errors.Is(err, wantErr) {
					t.Fatalf("%s cut to %d bytes: err = %v, want %v", snap, size, err, wantErr)
				}
			}
			h.rewrite(t, store, snap.Key(prefix), func([]byte) []byte { return data })
			if err := openSnapshot(t, store, snap); err != nil {
				t.Fatalf("%s restored to its saved contents: %v", snap, err)
			}
		}
	}
}

// openSnapshot fetches and reads a snapshot completely through the format's verification.
func openSnapshot(t *testing.T, store SnapStore, snap *snapshot.Snapshot) error {
	t.Helper()
	rc, err := store.Fetch(t.Context(), snap)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if snap.Kind == snapshot.KindIncr {
		_, err := snapshotformat.OpenDelta(rc, snap, 0)
		return err
	}
	fr, err := snapshotformat.OpenFull(rc, snap, false)
	if err != nil {
		return err
	}
	defer fr.Close()
	_, err = io.Copy(io.Discard, fr)
	return err
}

// upstreamObject is an object as the upstream sidecar writes it and what listing it must yield.
type upstreamObject struct {
	key         string // below the prefix
	kind        snapshot.Kind
	start, last int64
	created     int64
	compression snapshot.Compression
	final       bool
	snapDir     string
}

// testUpstreamLayout: objects written by name as the upstream etcd-backup-restore names them (every
// codec suffix, a final full snapshot, the legacy v1 directory) are listed with the kind, revisions,
// time, codec and layout their names carry, and read back through that codec.
func testUpstreamLayout(t *testing.T, h harness) {
	const prefix = "deployed/etcd-main"
	store := h.sharedOpen(t, prefix)
	objects := []upstreamObject{
		{"v1/Backup-1600000000/Full-00000000-00000040-1600000000", snapshot.KindFull, 0, 40, 1600000000, snapshot.CompressionNone, false, "Backup-1600000000"},
		// listed in this order: a full snapshot precedes a delta ending at its revision
		{"v2/Full-00000000-00000050-1700000000.gz", snapshot.KindFull, 0, 50, 1700000000, snapshot.CompressionGzip, false, ""},
		{"v1/Backup-1600000000/Incr-00000041-00000050-1600000060", snapshot.KindIncr, 41, 50, 1600000060, snapshot.CompressionNone, false, "Backup-1600000000"},
		{"v2/Incr-00000051-00000060-1700000060.gz", snapshot.KindIncr, 51, 60, 1700000060, snapshot.CompressionGzip, false, ""},
		{"v2/Incr-00000061-00000070-1700000120.zlib", snapshot.KindIncr, 61, 70, 1700000120, snapshot.CompressionZlib, false, ""},
		{"v2/Incr-00000071-00000080-1700000180.Z", snapshot.KindIncr, 71, 80, 1700000180, snapshot.CompressionLZW, false, ""},
		{"v2/Full-00000000-00000090-1700000300.gz.final", snapshot.KindFull, 0, 90, 1700000300, snapshot.CompressionGzip, true, ""},
		{"v2/Incr-00000081-00000090-1700000240", snapshot.KindIncr, 81, 90, 1700000240, snapshot.CompressionNone, false, ""},
	}
	for _, o := range objects {
		var data []byte
		if o.kind == snapshot.KindFull {
			data = compress(t, fullSnapshotBytes(4096, byte(o.last)), o.compression)
		} else {
			data = deltaBytes(t, o.start, int(o.last-o.start+1), o.compression)
		}
		h.putRaw(t, prefix+"/"+o.key, data)
	}

	listed := list(t, store)
	if len(listed) != len(objects) {
		t.Fatalf("List = %v, want the %d deployed objects", keys(listed), len(objects))
	}
	for i, o := range objects {
		got := listed[i]
		if got.RelativeKey() != o.key || got.Kind != o.kind || got.StartRevision != o.start || got.LastRevision != o.last ||
			!got.CreatedOn.Equal(time.Unix(o.created, 0)) || got.Compression() != o.compression || got.IsFinal != o.final ||
			got.SnapDir != o.snapDir || got.Prefix != prefix {
			t.Fatalf("listed %+v, want %+v", got, o)
		}
		if err := openSnapshot(t, store, got); err != nil {
			t.Fatalf("reading %s through its codec: %v", got, err)
		}
	}
	stream, err := snapshot.LatestStream(listed)
	if err != nil || stream.Full == nil || !stream.Full.IsFinal || len(stream.Deltas) != 0 || stream.LastRevision() != 90 {
		t.Fatalf("LatestStream = %+v, %v; want the final full snapshot alone", stream, err)
	}
}

// setListPageSize makes a store list in pages of n objects, to follow continuation across pages.
func setListPageSize(t *testing.T, store SnapStore, n int) {
	t.Helper()
	switch s := store.(type) {
	case *blobStore:
		s.listPageSize = n
	case *swiftStore:
		s.listLimit = n
	default:
		t.Fatalf("no list page size for %T", store)
	}
}
