package snapstore

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/go-logr/logr/testr"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/test/support/s3server"
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
	rec := &partRecorder{}
	proxy := srv.ReverseProxy()
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

// TestS3StagedCopyInParts saves a staged upload too large for one CopyObject (with the limit lowered
// from S3's 5 GiB) and checks the copy in parts is complete, and that a failed part copy leaves
// neither the snapshot nor a multipart upload behind.
func TestS3StagedCopyInParts(t *testing.T) {
	srv := s3server.Start(t)
	srv.CreateBucket(t, "copy")
	store := openS3ForTest(t, srv, "copy", "etcd", UploadOptions{ChunkSize: 5 << 20, MaxParallelChunks: 3}).(*blobStore)
	copier := s3Copier{client: srv.Client(), bucket: "copy", concurrency: 3, maxSingle: 20 << 20, partSize: 5 << 20}
	store.copyObject = copier.copy

	data := fullSnapshotBytes(23<<20+17, 9) // four whole parts and a short one
	snap := snapshot.NewFull(50, time.Unix(1700000000, 0), snapshot.CompressionNone, false)
	saved, err := store.SaveStaged(t.Context(), bytes.NewReader(data), func() (*snapshot.Snapshot, error) { return snap, nil })
	if err != nil {
		t.Fatal(err)
	}
	if got := fetch(t, store, saved); !bytes.Equal(got, data) {
		t.Fatalf("fetched %d bytes differ from the %d saved", len(got), len(data))
	}
	head, err := srv.Client().HeadObject(t.Context(), &s3.HeadObjectInput{Bucket: aws.String("copy"), Key: aws.String(snap.Key("etcd"))})
	if err != nil {
		t.Fatal(err)
	}
	if etag := strings.Trim(aws.ToString(head.ETag), `"`); !strings.HasSuffix(etag, "-5") {
		t.Fatalf("snapshot has ETag %q, want one of a multipart upload of 5 parts", etag)
	}

	// A part copy that fails (its source is gone) fails the copy and cleans up.
	err = copier.copy(t.Context(), "etcd/v2/Full-00000000-00000060-1700000000", "etcd/staging/missing", int64(len(data)))
	if err == nil {
		t.Fatal("copying a missing source succeeded")
	}
	out, err := srv.Client().ListMultipartUploads(t.Context(), &s3.ListMultipartUploadsInput{Bucket: aws.String("copy")})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Uploads) != 0 {
		t.Fatalf("%d multipart uploads left after a failed copy", len(out.Uploads))
	}
	if snaps := list(t, store); len(snaps) != 1 || snaps[0].SnapName != snap.SnapName {
		t.Fatalf("store holds %v, want only %s", keys(snaps), snap.SnapName)
	}
}
