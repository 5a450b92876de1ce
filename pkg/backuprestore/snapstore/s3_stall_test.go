package snapstore

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/test/support/s3server"
)

// stallingServer is a reverse proxy in front of the S3 server. It holds the requests hold picks
// without ever answering them, as a store that accepts a request and goes silent does, delays each
// part of a multipart upload and each listing request by partDelay and listDelay before passing it on,
// as a slow store does, and paces the bodies of object downloads as download says.
type stallingServer struct {
	hold      func(r *http.Request) bool
	partDelay time.Duration
	listDelay time.Duration
	download  *pacedBody
	held      atomic.Int32
	delayed   atomic.Int32
}

// holdUnanswered counts r in held and answers it never: it returns when the client gives up or released
// is closed (the test ends), as a store that accepts a request and goes silent.
func holdUnanswered(r *http.Request, held *atomic.Int32, released <-chan struct{}) {
	held.Add(1)
	// The server notices a client that goes only once the body is read.
	_, _ = io.Copy(io.Discard, r.Body)
	select {
	case <-r.Context().Done():
	case <-released:
	}
}

func startStallingServer(t *testing.T, srv *s3server.Server, s *stallingServer) string {
	t.Helper()
	proxy := srv.ReverseProxy()
	released := make(chan struct{})
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.hold != nil && s.hold(r) {
			holdUnanswered(r, &s.held, released)
			return
		}
		if isPart(r) && s.partDelay > 0 {
			s.delayed.Add(1)
			time.Sleep(s.partDelay)
		}
		if isList(r) && s.listDelay > 0 {
			s.delayed.Add(1)
			time.Sleep(s.listDelay)
		}
		if isGetObject(r) && s.download != nil {
			w = &pacingWriter{ResponseWriter: w, paced: s.download, held: &s.held, done: r.Context().Done(), released: released}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	t.Cleanup(func() { close(released) }) // runs before front.Close
	return front.URL
}

func isList(r *http.Request) bool {
	return r.Method == http.MethodGet && r.URL.Query().Has("list-type")
}

func isGetObject(r *http.Request) bool {
	return r.Method == http.MethodGet && !r.URL.Query().Has("list-type") && strings.Count(strings.Trim(r.URL.Path, "/"), "/") > 0
}

func isPart(r *http.Request) bool {
	return r.Method == http.MethodPut && r.URL.Query().Has("partNumber")
}

func isCopy(r *http.Request) bool {
	return r.Method == http.MethodPut && r.Header.Get("X-Amz-Copy-Source") != ""
}

func isPutObject(r *http.Request) bool {
	return r.Method == http.MethodPut && !isPart(r) && !isCopy(r) && r.URL.Query().Get("uploadId") == ""
}

// openStallingS3 opens an S3 store through a stalling server, with limits' Upload and
// DownloadStallTimeout.
func openStallingS3(t *testing.T, stalling *stallingServer, limits Config) SnapStore {
	t.Helper()
	srv := s3server.Start(t)
	srv.CreateBucket(t, "stall")
	store, err := New(t.Context(), Config{
		Provider: "S3", Container: "stall", Prefix: "etcd", EndpointOverride: startStallingServer(t, srv, stalling),
		SecretDir: s3SecretFor(t, srv), Upload: limits.Upload, DownloadStallTimeout: limits.DownloadStallTimeout,
	}, testr.New(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	return store
}

// An upload the store holds without answering fails with ErrUploadStalled instead of waiting for as
// long as the connection lives, whether the store goes silent on a whole small object, on one part of a
// large one, or on the server-side copy of a staged upload and the deletions after it; and nothing is
// left that lists as a snapshot.
func TestS3UploadTheStoreStopsAnsweringFails(t *testing.T) {
	const stall = 2 * time.Second
	full := snapshot.NewFull(12<<20, time.Unix(1700000000, 0), snapshot.CompressionNone, false)
	small := fullSnapshotBytes(4096, 1)
	cases := []struct {
		name string
		hold func(r *http.Request) bool
		save func(ctx context.Context, store SnapStore) error
	}{
		{"a small object", isPutObject, func(ctx context.Context, store SnapStore) error {
			return store.Save(ctx, full, bytes.NewReader(small))
		}},
		{"the second part", func(r *http.Request) bool { return isPart(r) && r.URL.Query().Get("partNumber") == "2" },
			func(ctx context.Context, store SnapStore) error {
				return store.Save(ctx, full, io.LimitReader(newGenerator(1), 12<<20))
			}},
		{"the copy of a staged upload", func(r *http.Request) bool { return isCopy(r) || r.Method == http.MethodDelete }, func(ctx context.Context, store SnapStore) error {
			_, err := store.(StagedSaver).SaveStaged(ctx, bytes.NewReader(small), func() (*snapshot.Snapshot, error) { return full, nil })
			return err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stalling := &stallingServer{hold: tc.hold}
			store := openStallingS3(t, stalling, Config{Upload: UploadOptions{ChunkSize: 5 << 20, MaxParallelChunks: 1, StallTimeout: stall}})
			// Without the stall limit, the save would wait for as long as the test runs.
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			err := tc.save(ctx, store)
			if !errors.Is(err, ErrUploadStalled) {
				t.Fatalf("Save with a store that holds %s: err = %v, want ErrUploadStalled", tc.name, err)
			}
			if stalling.held.Load() == 0 {
				t.Fatalf("the store held no request; the error came from elsewhere: %v", err)
			}
			t.Logf("Save failed as it should: %v", err)
			if snaps := list(t, store); len(snaps) != 0 {
				t.Errorf("the stalled upload left %v", keys(snaps))
			}
		})
	}
}

// A store that is slow but moves is never given up on, however long the whole upload takes: each part
// here is delayed by a sixth of the stall limit (the driver reads up to two parts ahead of the one it
// sends), and the upload of ten parts, which takes longer than the limit, goes through.
func TestS3SlowUploadThatMovesIsNotGivenUp(t *testing.T) {
	const stall, parts = 6 * time.Second, 10
	stalling := &stallingServer{partDelay: stall / 6}
	store := openStallingS3(t, stalling, Config{Upload: UploadOptions{ChunkSize: 5 << 20, MaxParallelChunks: 1, StallTimeout: stall}})
	snap := snapshot.NewFull(parts*5<<20, time.Unix(1700000000, 0), snapshot.CompressionNone, false)
	start := time.Now()
	if err := store.Save(t.Context(), snap, io.LimitReader(newGenerator(2), parts*5<<20)); err != nil {
		t.Fatalf("Save through a slow store: %v", err)
	}
	if n := stalling.delayed.Load(); n < parts {
		t.Fatalf("%d parts went through the slow store, want %d: the upload did not take longer than the stall limit", n, parts)
	}
	t.Logf("%d parts, each delayed by %s, stored in %s against a stall limit of %s", parts, stall/6, time.Since(start).Round(time.Millisecond), stall)
	if got := keys(list(t, store)); len(got) != 1 {
		t.Fatalf("store lists %v, want the one snapshot", got)
	}
}
