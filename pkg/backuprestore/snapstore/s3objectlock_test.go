package snapstore

import (
	"bytes"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/go-logr/logr/testr"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/test/support/minioserver"
)

// On a bucket with S3 Object Lock and a default retention (immutable backups), every way the sidecar
// uploads a snapshot works (one PutObject, a multipart upload, a staged upload copied to its name), over
// TLS as against AWS and over plain HTTP; and a snapshot still under retention is not deleted: Delete
// reports ErrLocked and the snapshot stays listed and readable (no delete marker hides it).
func TestS3ObjectLockBucket(t *testing.T) {
	for _, tc := range []struct {
		name string
		tls  bool
	}{{"https", true}, {"http", false}} {
		t.Run(tc.name, func(t *testing.T) {
			minio := minioserver.Start(t, minioserver.Config{Region: minioRegion})
			minio.CreateObjectLockBucket(t, "immutable")
			minio.SetDefaultRetention(t, "immutable", 1)
			store := openMinIOStore(t, startObjectLockRules(t, minio.Endpoint, tc.tls), "immutable")
			base := time.Now().Add(-time.Hour)

			small := fullSnapshotBytes(64<<10, 1)
			single := snapshot.NewFull(10, base, snapshot.CompressionNone, false)
			if err := store.Save(t.Context(), single, bytes.NewReader(small)); err != nil {
				t.Fatalf("single-request upload to an object-lock bucket: %v", err)
			}
			large := fullSnapshotBytes(12<<20, 2)
			multipart := snapshot.NewFull(20, base.Add(time.Minute), snapshot.CompressionNone, false)
			if err := store.Save(t.Context(), multipart, bytes.NewReader(large)); err != nil {
				t.Fatalf("multipart upload to an object-lock bucket: %v", err)
			}
			staged := snapshot.NewFull(30, base.Add(2*time.Minute), snapshot.CompressionNone, false)
			if _, err := store.(StagedSaver).SaveStaged(t.Context(), bytes.NewReader(small),
				func() (*snapshot.Snapshot, error) { return staged, nil }); err != nil {
				t.Fatalf("staged upload to an object-lock bucket: %v", err)
			}

			err := store.Delete(t.Context(), single)
			t.Logf("deleting a snapshot under retention: %v", err)
			if !errors.Is(err, ErrLocked) {
				t.Fatalf("Delete of a snapshot under retention: err = %v, want ErrLocked", err)
			}
			list, err := store.List(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if len(list) != 3 || list[0].SnapName != single.SnapName {
				t.Fatalf("after the refused delete the store lists %v, want the three snapshots", list)
			}
			rc, err := store.Fetch(t.Context(), single)
			if err != nil {
				t.Fatalf("the locked snapshot is no longer readable: %v", err)
			}
			got, err := io.ReadAll(rc)
			_ = rc.Close()
			if err != nil || !bytes.Equal(got, small) {
				t.Fatalf("read back %d bytes (%v), want the %d saved", len(got), err, len(small))
			}
			if _, markers := minio.Versions(t, "immutable"); len(markers) != 0 {
				t.Fatalf("delete markers %v were left in the bucket", markers)
			}
		})
	}
}

// On an object-lock bucket a snapshot whose retention has ended is deleted for good: its version goes,
// not only its name (a delete marker would keep the bytes, and their cost, for ever).
func TestS3ObjectLockDeleteAfterRetention(t *testing.T) {
	minio := minioserver.Start(t, minioserver.Config{Region: minioRegion})
	minio.CreateObjectLockBucket(t, "immutable") // no default retention: nothing uploaded now is locked
	store := openMinIOStore(t, startObjectLockRules(t, minio.Endpoint, false), "immutable")
	snap := snapshot.NewFull(10, time.Now().Add(-time.Hour), snapshot.CompressionNone, false)
	if err := store.Save(t.Context(), snap, bytes.NewReader(fullSnapshotBytes(1024, 1))); err != nil {
		t.Fatal(err)
	}
	if err := store.Delete(t.Context(), snap); err != nil {
		t.Fatalf("deleting an unlocked snapshot: %v", err)
	}
	if objects, markers := minio.Versions(t, "immutable"); len(objects) != 0 || len(markers) != 0 {
		t.Fatalf("after the delete the bucket holds versions of %v and delete markers %v, want nothing", objects, markers)
	}
	if err := store.Delete(t.Context(), snap); err != nil {
		t.Fatalf("deleting a snapshot already gone: %v", err)
	}
}

// A lock the store could not see before deleting (S3 leaves the retention out of HeadObject without the
// permission s3:GetObjectRetention; here: a clock past the retention) is still reported as ErrLocked
// when the server refuses the delete because of it, and the version stays.
func TestS3ObjectLockRefusedDeleteIsLocked(t *testing.T) {
	minio := minioserver.Start(t, minioserver.Config{Region: minioRegion})
	minio.CreateObjectLockBucket(t, "immutable")
	minio.SetDefaultRetention(t, "immutable", 1)
	client := minio.RootClient(t)
	if _, err := client.PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String("immutable"), Key: aws.String("k"),
		Body: strings.NewReader("snapshot"), ChecksumAlgorithm: types.ChecksumAlgorithmCrc32}); err != nil {
		t.Fatal(err)
	}
	lateClock := func() time.Time { return time.Now().Add(48 * time.Hour) }
	err := s3VersionDeleter{client: client, bucket: "immutable", now: lateClock}.deleteVersions(t.Context(), "k")
	t.Logf("refused delete: %v", err)
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("err = %v, want ErrLocked", err)
	}
	if objects, _ := minio.Versions(t, "immutable"); len(objects) != 1 {
		t.Fatalf("versions left: %v, want the locked one", objects)
	}
}

// openMinIOStore opens an S3 store of bucket at endpoint with MinIO's root credentials.
func openMinIOStore(t *testing.T, endpoint *objectLockRules, bucket string) SnapStore {
	t.Helper()
	keys := map[string]string{"region": minioRegion, "endpoint": endpoint.URL, "s3ForcePathStyle": "true",
		"accessKeyID": minioserver.RootUser, "secretAccessKey": minioserver.RootPassword}
	if endpoint.caPEM != "" {
		keys["trustedCaCert"] = endpoint.caPEM
	}
	store, err := New(t.Context(), Config{Provider: "aws", Container: bucket, Prefix: "shoot--a/etcd-main",
		SecretDir: writeSecretDir(t, keys), Upload: UploadOptions{ChunkSize: 5 << 20, MaxParallelChunks: 2}}, testr.New(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	return store
}

// objectLockRules stands in front of MinIO and enforces what AWS S3 enforces on a bucket with a default
// retention and MinIO does not: an upload (PutObject, UploadPart) must carry Content-MD5 or a checksum
// (x-amz-checksum-*, or x-amz-sdk-checksum-algorithm for a checksum in the trailer), else AWS answers 400
// InvalidRequest. Everything else goes to MinIO unchanged (SigV4 signs the Host header, which the proxy
// keeps).
type objectLockRules struct {
	URL   string
	caPEM string // the proxy's certificate when it serves TLS

	mu       sync.Mutex
	refusals []string
}

func startObjectLockRules(t *testing.T, minioEndpoint string, withTLS bool) *objectLockRules {
	t.Helper()
	target, err := url.Parse(minioEndpoint)
	if err != nil {
		t.Fatal(err)
	}
	p := &objectLockRules{}
	forward := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && r.Header.Get("X-Amz-Copy-Source") == "" && !hasChecksum(r.Header) {
			p.mu.Lock()
			p.refusals = append(p.refusals, r.URL.String())
			p.mu.Unlock()
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>InvalidRequest</Code>`+
				`<Message>Content-MD5 OR x-amz-checksum- HTTP header is required for Put Object requests with Object Lock parameters</Message></Error>`)
			return
		}
		forward.ServeHTTP(w, r)
	}))
	if withTLS {
		srv.StartTLS()
		p.caPEM = string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

// hasChecksum tells whether an upload carries what AWS accepts as its integrity check under Object Lock.
func hasChecksum(h http.Header) bool {
	if h.Get("Content-Md5") != "" || h.Get("X-Amz-Sdk-Checksum-Algorithm") != "" {
		return true
	}
	for name := range h {
		if strings.HasPrefix(strings.ToLower(name), "x-amz-checksum-") {
			return true
		}
	}
	return false
}
