package snapstore

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
)

// lateManifestProxy plays a Swift that takes a manifest upload and writes it only after its client
// has hung up: once the client is gone it holds every segment DELETE until it has passed the manifest
// on, as Swift does when the deletions come between its check of the segments and its write.
type lateManifestProxy struct {
	// onManifest runs once the whole manifest has arrived: the caller's cancellation, for example.
	onManifest func()
	// answerAfter is how long the proxy waits for the client to hang up before it passes the manifest on
	// and answers; zero waits for as long as the client does.
	answerAfter time.Duration

	saveReturned   chan struct{} // closed by the test once the save has returned
	deleteArrived  chan struct{}
	manifestPassed chan struct{}
	passed         sync.Once // closes manifestPassed
	arrived        sync.Once // closes deleteArrived
}

func newLateManifestProxy(onManifest func(), answerAfter time.Duration) *lateManifestProxy {
	return &lateManifestProxy{onManifest: onManifest, answerAfter: answerAfter, saveReturned: make(chan struct{}),
		deleteArrived: make(chan struct{}), manifestPassed: make(chan struct{})}
}

func (p *lateManifestProxy) front(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPut && r.URL.Query().Get("multipart-manifest") == "put":
			p.manifest(w, r, next)
		case r.Method == http.MethodDelete && strings.Contains(r.URL.Path, "/segments/"):
			p.arrived.Do(func() { close(p.deleteArrived) })
			select {
			case <-p.manifestPassed:
			case <-r.Context().Done():
				return
			}
			next.ServeHTTP(w, r)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

func (p *lateManifestProxy) manifest(w http.ResponseWriter, r *http.Request, next http.Handler) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	p.onManifest()
	var answer <-chan time.Time
	if p.answerAfter > 0 {
		answer = time.After(p.answerAfter)
	}
	select {
	case <-answer: // the client still waits: write the manifest and answer
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
		p.passed.Do(func() { close(p.manifestPassed) })
		return
	case <-r.Context().Done():
	}
	// The client has hung up. Write the manifest once its clean-up deletes a segment, or once the save
	// has returned without deleting any.
	select {
	case <-p.deleteArrived:
	case <-p.saveReturned:
	}
	late := r.Clone(context.Background())
	late.Body = io.NopCloser(bytes.NewReader(body))
	next.ServeHTTP(httptest.NewRecorder(), late)
	p.passed.Do(func() { close(p.manifestPassed) })
}

// A large upload whose manifest upload the caller cancels, or which the store holds past the stall
// limit, never leaves a snapshot that lists but has lost its segments: Swift may write a manifest after
// its client has hung up, so the segments are deleted only when Swift has refused the manifest.
func TestSwiftManifestWrittenAfterTheClientLeftKeepsItsSegments(t *testing.T) {
	const chunk = 1 << 20
	f := newSwiftFixture(t)
	cases := []struct {
		name        string
		cancels     bool
		answerAfter time.Duration
		stall       time.Duration
	}{
		// The caller cancels (a sidecar shutting down) while Swift checks the segments; Swift answers a
		// second later.
		{name: "the caller cancels during the manifest upload", cancels: true, answerAfter: time.Second, stall: 10 * time.Second},
		// The caller cancels and Swift does not answer within the stall limit the PUT gets after the
		// cancellation; it writes the manifest afterwards.
		{name: "the caller cancels and the store holds the manifest upload", cancels: true, stall: 2 * time.Second},
		// Swift does not answer the manifest upload within the stall limit, and writes it afterwards.
		{name: "the store holds the manifest upload past the stall limit", stall: 2 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			container := f.newContainer(t)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			onManifest := func() {}
			if tc.cancels {
				onManifest = cancel
			}
			proxy := newLateManifestProxy(onManifest, tc.answerAfter)
			store := openThroughSwiftProxy(t, f, container,
				Config{Upload: UploadOptions{ChunkSize: chunk, MaxParallelChunks: 2, StallTimeout: tc.stall}}, proxy.front)
			snap := snapshot.NewFull(5, time.Unix(1700000000, 0), snapshot.CompressionNone, false)
			data := fullSnapshotBytes(3*chunk+100, 3)

			err := store.Save(ctx, snap, bytes.NewReader(data))
			close(proxy.saveReturned)
			select {
			case <-proxy.manifestPassed:
			case <-time.After(time.Minute):
				t.Fatalf("the manifest upload never reached the proxy; Save: %v", err)
			}
			t.Logf("Save returned %v", err)

			direct := f.open(t, container, "p", UploadOptions{})
			// The proxy wrote the manifest while the segments existed: the snapshot lists, and must read.
			listed := list(t, direct)
			if len(listed) != 1 {
				t.Fatalf("after Save returned %v and the manifest was written, %d snapshots list", err, len(listed))
			}
			var got bytes.Buffer
			if _, ferr := readInto(t.Context(), direct, listed[0], 0, &got); ferr != nil || !bytes.Equal(got.Bytes(), data) {
				t.Fatalf("the snapshot lists after Save returned %v, but reads %d bytes of %d: %v", err, got.Len(), len(data), ferr)
			}
		})
	}
}

// A manifest Swift refuses (here its segments' ETags are made wrong on the way, and Swift answers 400)
// is an answer: the upload fails and deletes its segments.
func TestSwiftRefusedManifestDeletesItsSegments(t *testing.T) {
	const chunk = 1 << 20
	f := newSwiftFixture(t)
	container := f.newContainer(t)
	etag := regexp.MustCompile(`"etag": ?"[0-9a-f]+"`)
	var refusals atomic.Int32
	store := openThroughSwiftProxy(t, f, container, Config{Upload: UploadOptions{ChunkSize: chunk, MaxParallelChunks: 2}},
		func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPut && r.URL.Query().Get("multipart-manifest") == "put" {
					body, err := io.ReadAll(r.Body)
					if err != nil {
						return
					}
					wrong := etag.ReplaceAll(body, []byte(`"etag":"00000000000000000000000000000000"`))
					r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(wrong)), int64(len(wrong))
					rec := httptest.NewRecorder()
					next.ServeHTTP(rec, r)
					if rec.Code == http.StatusBadRequest {
						refusals.Add(1)
					}
					for k, v := range rec.Header() {
						w.Header()[k] = v
					}
					w.WriteHeader(rec.Code)
					_, _ = w.Write(rec.Body.Bytes())
					return
				}
				next.ServeHTTP(w, r)
			})
		})
	snap := snapshot.NewFull(5, time.Unix(1700000000, 0), snapshot.CompressionNone, false)
	err := store.Save(t.Context(), snap, bytes.NewReader(fullSnapshotBytes(3*chunk+100, 3)))
	if err == nil || refusals.Load() == 0 {
		t.Fatalf("Save with a manifest Swift refuses: err = %v, refusals %d", err, refusals.Load())
	}
	if got := containerObjects(t, f.open(t, container, "p", UploadOptions{})); len(got) != 0 {
		t.Fatalf("after Swift refused the manifest, the container holds %v", got)
	}
}
