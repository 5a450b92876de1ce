package snapstore

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
)

// pacedBody is how stallingServer answers object downloads: piece bytes at a time, pieceDelay after
// each, and nothing more once silentAfter bytes are out (0: the whole body). pieces counts the pieces
// begun.
type pacedBody struct {
	piece       int
	pieceDelay  time.Duration
	silentAfter int64
	pieces      atomic.Int32
}

// pacingWriter writes a download's body as its pacedBody says, counting pieces by bytes (the proxy
// writes in its own sizes); once silent, it holds the response until the client gives up or the test
// ends, and counts the hold.
type pacingWriter struct {
	http.ResponseWriter
	paced    *pacedBody
	held     *atomic.Int32
	done     <-chan struct{}
	released <-chan struct{}
	written  int64
}

func (w *pacingWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		piece := int64(w.paced.piece)
		k := min(int64(len(p)), piece-w.written%piece) // up to the end of the current piece
		if w.paced.silentAfter > 0 {
			k = min(k, w.paced.silentAfter-w.written)
		}
		if k == 0 {
			w.held.Add(1)
			select {
			case <-w.done:
			case <-w.released:
			}
			return n, errors.New("the paced body went silent")
		}
		if w.written%piece == 0 { // counted before its bytes go out, so before the client can have them all
			w.paced.pieces.Add(1)
		}
		m, err := w.ResponseWriter.Write(p[:k])
		n, w.written, p = n+m, w.written+int64(m), p[m:]
		if err != nil {
			return n, err
		}
		if w.written%piece == 0 { // a piece is complete: send it, then wait
			if err := http.NewResponseController(w.ResponseWriter).Flush(); err != nil {
				return n, err
			}
			time.Sleep(w.paced.pieceDelay)
		}
	}
	return n, nil
}

func (w *pacingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// storedThroughStallingS3 stores a full snapshot of size bytes through a stalling server that passes
// uploads on and returns the store, the snapshot and its bytes.
func storedThroughStallingS3(t *testing.T, stalling *stallingServer, downloadStall time.Duration, size int) (SnapStore, *snapshot.Snapshot, []byte) {
	t.Helper()
	store := openStallingS3(t, stalling, Config{DownloadStallTimeout: downloadStall})
	data := fullSnapshotBytes(size, 3)
	snap := snapshot.NewFull(int64(size), time.Unix(1700000000, 0), snapshot.CompressionNone, false)
	if err := store.Save(t.Context(), snap, bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	return store, snap, data
}

// A download the store holds, before it answers or in the middle of the body, fails with
// ErrDownloadStalled instead of waiting for as long as the connection lives (a restore would wait with
// the member down).
func TestS3DownloadTheStoreStopsAnsweringFails(t *testing.T) {
	const stall = 2 * time.Second
	cases := []struct {
		name     string
		stalling *stallingServer
	}{
		{"the request", &stallingServer{hold: isGetObject}},
		{"the body after its first 64 KiB", &stallingServer{download: &pacedBody{piece: 16 << 10, silentAfter: 64 << 10}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			store, snap, _ := storedThroughStallingS3(t, tc.stalling, stall, 1<<20)
			// Without the stall limit, the download would wait for as long as the test runs.
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			err := readWhole(ctx, store, snap)
			if !errors.Is(err, ErrDownloadStalled) {
				t.Fatalf("Fetch with a store that holds %s: err = %v, want ErrDownloadStalled", tc.name, err)
			}
			if tc.stalling.held.Load() == 0 {
				t.Fatalf("the store held no download; the error came from elsewhere: %v", err)
			}
			if !strings.Contains(err.Error(), snap.Key("etcd")+" in S3 stall") {
				t.Errorf("the error does not name the object and the store: %v", err)
			}
			t.Logf("the download failed as it should: %v", err)
		})
	}
}

// Only the store's time counts: a download whose body trickles in, taking longer in all than the limit
// but never a limit for one read, goes through, and so does one whose reader waits longer than the limit
// between its reads.
func TestS3SlowDownloadsThatMoveAreNotGivenUp(t *testing.T) {
	const stall = 2 * time.Second
	t.Run("a store that sends 64 KiB every sixth of the limit", func(t *testing.T) {
		const pieces = 8 // 7 waits of stall/6 between them: longer than the limit in all
		paced := &pacedBody{piece: 64 << 10, pieceDelay: stall / 6}
		stalling := &stallingServer{download: paced}
		store, snap, data := storedThroughStallingS3(t, stalling, stall, pieces*64<<10)
		var got bytes.Buffer
		if _, err := readInto(t.Context(), store, snap, 0, &got); err != nil {
			t.Fatalf("Fetch through a slow store: %v", err)
		}
		if !bytes.Equal(got.Bytes(), data) {
			t.Fatalf("downloaded %d bytes that differ from the %d stored", got.Len(), len(data))
		}
		if n := paced.pieces.Load(); n < pieces {
			t.Fatalf("%d pieces went through the slow store, want %d: the download did not take longer than the limit", n, pieces)
		}
		t.Logf("%d pieces, each followed by %s, downloaded against a stall limit of %s", pieces, paced.pieceDelay, stall)
	})
	t.Run("a reader that pauses longer than the limit between reads", func(t *testing.T) {
		store, snap, data := storedThroughStallingS3(t, &stallingServer{}, stall, 3*readSize)
		var got bytes.Buffer
		pauses, err := readInto(t.Context(), store, snap, stall*3/2, &got)
		if err != nil {
			t.Fatalf("Fetch read with pauses: %v", err)
		}
		if !bytes.Equal(got.Bytes(), data) {
			t.Fatalf("downloaded %d bytes that differ from the %d stored", got.Len(), len(data))
		}
		if pauses < 2 {
			t.Fatalf("the reader paused %d times, want at least 2: the case tests nothing", pauses)
		}
	})
}

func readWhole(ctx context.Context, store SnapStore, snap *snapshot.Snapshot) error {
	_, err := readInto(ctx, store, snap, 0, io.Discard)
	return err
}

// readSize is how much readInto asks for at a time.
const readSize = 128 << 10

// readInto downloads snap into w, readSize bytes per read, pausing between reads, and returns how
// often it paused.
func readInto(ctx context.Context, store SnapStore, snap *snapshot.Snapshot, pause time.Duration, w io.Writer) (pauses int, err error) {
	rc, err := store.Fetch(ctx, snap)
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	buf := make([]byte, readSize)
	for {
		n, err := io.ReadFull(rc, buf)
		if _, werr := w.Write(buf[:n]); werr != nil {
			return pauses, werr
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return pauses, nil
		}
		if err != nil {
			return pauses, err
		}
		time.Sleep(pause)
		pauses++
	}
}

// A listing the store holds fails with ErrListingStalled (a restore lists before it reads anything); a
// listing of many pages, each slow but answered, goes through however long it takes in all.
func TestS3ListingsTheStoreHoldsFailSlowOnesDoNot(t *testing.T) {
	const stall = 2 * time.Second
	t.Run("a page the store holds", func(t *testing.T) {
		stalling := &stallingServer{hold: isList}
		store := openStallingS3(t, stalling, Config{DownloadStallTimeout: stall})
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		_, err := store.List(ctx)
		if !errors.Is(err, ErrListingStalled) {
			t.Fatalf("List with a store that holds it: err = %v, want ErrListingStalled", err)
		}
		if stalling.held.Load() == 0 {
			t.Fatalf("the store held no listing; the error came from elsewhere: %v", err)
		}
		t.Logf("the listing failed as it should: %v", err)
	})
	t.Run("pages of a third of the limit each", func(t *testing.T) {
		const snapshots = 4 // one per page, and the empty legacy layout's page: 5 × stall/3 in all
		stalling := &stallingServer{}
		store := openStallingS3(t, stalling, Config{DownloadStallTimeout: stall})
		for i := range snapshots {
			snap := snapshot.NewFull(int64(i+1), time.Unix(1700000000, 0), snapshot.CompressionNone, false)
			if err := store.Save(t.Context(), snap, bytes.NewReader(fullSnapshotBytes(1024, byte(i)))); err != nil {
				t.Fatal(err)
			}
		}
		store.(*blobStore).listPageSize = 1
		stalling.listDelay = stall / 3
		snaps, err := store.List(t.Context())
		if err != nil {
			t.Fatalf("List through a slow store: %v", err)
		}
		if len(snaps) != snapshots {
			t.Fatalf("listed %v, want %d snapshots", keys(snaps), snapshots)
		}
		if n := stalling.delayed.Load(); n <= snapshots {
			t.Fatalf("%d listing requests went through the slow store, want more than %d", n, snapshots)
		}
	})
}
