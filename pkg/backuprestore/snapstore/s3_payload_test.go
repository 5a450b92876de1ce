package snapstore

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/test/s3server"
)

// partRecorder is a reverse proxy in front of the S3 server that records the payload headers of
// UploadPart requests and can corrupt the body of one of them on the way.
type partRecorder struct {
	mu      sync.Mutex
	parts   []http.Header
	corrupt bool // flip a byte of the next part's body
}

func startPartRecorder(t *testing.T, srv *s3server.Server) (*partRecorder, string) {
	t.Helper()
	target, err := url.Parse(srv.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	rec := &partRecorder{}
	proxy := httputil.NewSingleHostReverseProxy(target)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && r.URL.Query().Has("partNumber") {
			rec.mu.Lock()
			rec.parts = append(rec.parts, r.Header.Clone())
			corrupt := rec.corrupt
			rec.corrupt = false
			rec.mu.Unlock()
			if corrupt {
				body, err := io.ReadAll(r.Body)
				if err != nil {
					http.Error(w, err.Error(), http.StatusBadRequest)
					return
				}
				body[len(body)/2] ^= 0x01
				r.Body = io.NopCloser(bytes.NewReader(body))
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	return rec, front.URL
}

func TestS3UploadOverPlainHTTPIsUnsignedWithCRC32(t *testing.T) {
	srv := s3server.Start(t)
	srv.CreateBucket(t, "payload")
	rec, endpoint := startPartRecorder(t, srv)
	store, err := New(t.Context(), Config{
		Provider: "S3", Container: "payload", Prefix: "etcd", EndpointOverride: endpoint,
		SecretDir: s3SecretFor(t, srv), Upload: UploadOptions{ChunkSize: 5 << 20, MaxParallelChunks: 2},
	}, testr.New(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })

	data := fullSnapshotBytes(12<<20, 7)
	snap := snapshot.NewFull(42, time.Unix(1700000000, 0), snapshot.CompressionNone, false)
	save(t, store, snap, data)
	if got := fetch(t, store, snap); !bytes.Equal(got, data) {
		t.Fatalf("fetched %d bytes differ from the %d saved", len(got), len(data))
	}
	rec.mu.Lock()
	parts := rec.parts
	rec.parts = nil
	rec.mu.Unlock()
	if len(parts) < 3 {
		t.Fatalf("saw %d UploadPart requests, want a multipart upload of at least 3 parts", len(parts))
	}
	for i, h := range parts {
		if got := h.Get("X-Amz-Content-Sha256"); got != unsignedPayload {
			t.Errorf("part request %d: x-amz-content-sha256 %q, want %q", i, got, unsignedPayload)
		}
		if h.Get("X-Amz-Checksum-Crc32") == "" {
			t.Errorf("part request %d carries no x-amz-checksum-crc32", i)
		}
		if !strings.Contains(h.Get("Authorization"), "Signature=") {
			t.Errorf("part request %d is not signed", i)
		}
	}

	// The checksum is what protects the body now: the server must refuse a part changed on the way.
	rec.mu.Lock()
	rec.corrupt = true
	rec.mu.Unlock()
	bad := snapshot.NewFull(43, time.Unix(1700000001, 0), snapshot.CompressionNone, false)
	if err := store.Save(t.Context(), bad, bytes.NewReader(data)); err == nil {
		t.Fatal("saving with a part corrupted in transit succeeded")
	}
	if snaps := list(t, store); len(snaps) != 1 || snaps[0].SnapName != snap.SnapName {
		t.Fatalf("store holds %v after the failed upload, want only %s", keys(snaps), snap.SnapName)
	}
}
