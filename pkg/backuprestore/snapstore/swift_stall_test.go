package snapstore

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
)

// holdingSwiftProxy is a proxy in front of the fixture's Swift server that never answers the requests
// the hold it points to picks (none while it points to nothing) and counts them.
type holdingSwiftProxy struct {
	hold atomic.Pointer[func(*http.Request) bool]
	held atomic.Int32
}

// openThroughHoldingProxy opens a Swift store of container with prefix p whose endpoint override is a
// holding proxy, with limits' Upload and DownloadStallTimeout.
func openThroughHoldingProxy(t *testing.T, f *swiftFixture, container string, limits Config) (SnapStore, *holdingSwiftProxy) {
	t.Helper()
	p := &holdingSwiftProxy{}
	released := make(chan struct{})
	store := openThroughSwiftProxy(t, f, container, limits, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if h := p.hold.Load(); h != nil && (*h)(r) {
				holdUnanswered(r, &p.held, released)
				return
			}
			next.ServeHTTP(w, r)
		})
	})
	t.Cleanup(func() { close(released) }) // before the proxy closes, which waits for the requests it holds
	return store, p
}

// openThroughSwiftProxy opens a Swift store of container with prefix p whose endpoint override is a
// server that hands every request to front, which passes on to the fixture's Swift server what it
// passes to next; limits gives Upload and DownloadStallTimeout.
func openThroughSwiftProxy(t *testing.T, f *swiftFixture, container string, limits Config, front func(next http.Handler) http.Handler) SnapStore {
	t.Helper()
	storage, err := url.Parse(f.srv.StorageURL)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(front(httputil.NewSingleHostReverseProxy(&url.URL{Scheme: storage.Scheme, Host: storage.Host})))
	t.Cleanup(srv.Close)
	store, err := New(t.Context(), Config{Provider: druidv1alpha1.StorageProviderSwift, Container: container, Prefix: "p",
		SecretDir: f.secret(t), EndpointOverride: srv.URL + storage.Path,
		Upload: limits.Upload, DownloadStallTimeout: limits.DownloadStallTimeout}, testr.New(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	return store
}

// A Swift store that holds an object's download or a listing fails them with ErrDownloadStalled and
// ErrListingStalled: the store is reached through a proxy (the endpoint override) that never answers
// the requests it holds.
func TestSwiftDownloadsAndListingsTheStoreHoldsFail(t *testing.T) {
	const stall = 2 * time.Second
	f := newSwiftFixture(t)
	container := f.newContainer(t)
	snap := snapshot.NewFull(1, time.Unix(1700000000, 0), snapshot.CompressionNone, false)
	save(t, f.open(t, container, "p", UploadOptions{}), snap, fullSnapshotBytes(4096, 1))

	store, proxy := openThroughHoldingProxy(t, f, container, Config{DownloadStallTimeout: stall})

	objectPath := "/" + container + "/" + snap.Key("p")
	cases := []struct {
		name string
		hold func(*http.Request) bool
		run  func(ctx context.Context) error
		want error
	}{
		{"an object's download", func(r *http.Request) bool {
			return r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, objectPath)
		},
			func(ctx context.Context) error { return readWhole(ctx, store, snap) }, ErrDownloadStalled},
		{"a listing", func(r *http.Request) bool {
			return r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/"+container)
		},
			func(ctx context.Context) error { _, err := store.List(ctx); return err }, ErrListingStalled},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			proxy.hold.Store(&tc.hold)
			before := proxy.held.Load()
			// Without the stall limit, the call would wait for as long as the test runs.
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			err := tc.run(ctx)
			if !errors.Is(err, tc.want) {
				t.Fatalf("with a store that holds %s: err = %v, want %v", tc.name, err, tc.want)
			}
			if proxy.held.Load() == before {
				t.Fatalf("the store held no request; the error came from elsewhere: %v", err)
			}
			t.Logf("failed as it should: %v", err)
		})
	}
}

// An upload the caller cancels while the store holds its segment PUTs still ends: the PUTs, which run on
// after the cancellation so that the clean-up knows which segments exist, get one stall limit more.
func TestSwiftCancelledUploadTheStoreHoldsEnds(t *testing.T) {
	const stall, chunk = 2 * time.Second, 1 << 20
	f := newSwiftFixture(t)
	container := f.newContainer(t)
	store, proxy := openThroughHoldingProxy(t, f, container, Config{Upload: UploadOptions{ChunkSize: chunk, MaxParallelChunks: 2, StallTimeout: stall}})
	holdSegments := func(r *http.Request) bool {
		return r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/segments/")
	}
	proxy.hold.Store(&holdSegments)
	// Without the limit after the cancellation, the save would wait for as long as the test runs.
	deadline, stop := context.WithTimeout(t.Context(), time.Minute)
	defer stop()
	ctx, cancel := context.WithCancel(deadline)
	defer cancel()
	snap := snapshot.NewFull(5, time.Unix(1700000000, 0), snapshot.CompressionNone, false)
	src := &cancelAfter{r: io.LimitReader(newGenerator(9), 8*chunk), n: 2 * chunk, cancel: cancel}
	err := store.Save(ctx, snap, src)
	if err == nil || deadline.Err() != nil {
		t.Fatalf("Save cancelled while the store holds its segments: err = %v, want an error before the test's deadline", err)
	}
	if proxy.held.Load() == 0 {
		t.Fatalf("the store held no segment; the error came from elsewhere: %v", err)
	}
	t.Logf("the cancelled save ended: %v", err)
}
