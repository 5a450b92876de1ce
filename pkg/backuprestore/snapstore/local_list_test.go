package snapstore

import (
	"bytes"
	"context"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
)

// A listing meets uploads and deletions in production (garbage collection and a resume list while the
// snapshotter stores). In the Local store an upload's temporary file lies beside its target and is
// renamed into place when the upload completes, and a deleted snapshot's file goes at once: a listing
// must neither fail on a file that went between reading the directory and looking at the file, nor
// report a temporary file. The uploads cycle through a few names so that every listing walks a
// directory of the same size.
func TestLocalListWhileUploadsCompleteAndSnapshotsAreDeleted(t *testing.T) {
	store := openLocalForTest(t, t.TempDir(), "bkp", "etcd-main", UploadOptions{})
	base := time.Unix(1700000000, 0)
	var snaps []*snapshot.Snapshot
	for i := range int64(4) {
		snaps = append(snaps, snapshot.NewIncr(10*i+1, 10*i+10, base, snapshot.CompressionNone))
	}
	data := deltaBytes(t, 1, 10, snapshot.CompressionNone)

	ctx, stop := context.WithCancel(t.Context())
	var changes atomic.Int64
	changed := make(chan error, 1)
	go func() {
		defer close(changed)
		for i := 0; ctx.Err() == nil; i++ {
			if err := store.Save(ctx, snaps[i%len(snaps)], bytes.NewReader(data)); err != nil && ctx.Err() == nil {
				changed <- err
				return
			}
			if err := store.Delete(ctx, snaps[(i+2)%len(snaps)]); err != nil && ctx.Err() == nil {
				changed <- err
				return
			}
			changes.Add(1)
		}
	}()
	const minListings, minChanges = 2000, 200
	n := 0
	for ; n < minListings || changes.Load() < minChanges; n++ {
		listed, err := store.List(t.Context())
		if err != nil {
			stop()
			<-changed
			t.Fatalf("listing %d, after %d saves and deletions: %v", n+1, changes.Load(), err)
		}
		for _, s := range listed {
			if s.Kind != snapshot.KindIncr || s.StartRevision%10 != 1 {
				t.Fatalf("listing %d holds %s, which no upload wrote", n+1, s)
			}
		}
	}
	stop()
	if err := <-changed; err != nil {
		t.Fatalf("save or delete beside the listings: %v", err)
	}
	t.Logf("%d listings beside %d saves and deletions", n, changes.Load())
}

// The stall limit counts the store's time only: a source that keeps the upload waiting for longer than
// the limit between its bytes (etcd's snapshot stream under load) does not fail it.
func TestSlowSourceDoesNotStallTheUpload(t *testing.T) {
	const stall = 200 * time.Millisecond
	store := openLocalForTest(t, t.TempDir(), "bkp", "etcd-main", UploadOptions{StallTimeout: stall})
	data := fullSnapshotBytes(2<<10, 4)
	snap := snapshot.NewFull(7, time.Unix(1700000000, 0), snapshot.CompressionNone, false)
	if err := store.Save(t.Context(), snap, &pausingReader{r: bytes.NewReader(data), pause: 3 * stall, chunk: 1536}); err != nil {
		t.Fatalf("Save from a source that pauses for 3× the stall limit: %v", err)
	}
	if got := keys(list(t, store)); len(got) != 1 {
		t.Fatalf("store lists %v, want the one snapshot", got)
	}
}

// pausingReader hands out r chunk bytes at a time and waits pause before each chunk after the first.
type pausingReader struct {
	r     io.Reader
	pause time.Duration
	chunk int
	reads int
}

func (p *pausingReader) Read(b []byte) (int, error) {
	if p.reads > 0 {
		time.Sleep(p.pause)
	}
	p.reads++
	return p.r.Read(b[:min(len(b), p.chunk)])
}
