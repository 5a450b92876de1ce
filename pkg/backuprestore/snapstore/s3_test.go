package snapstore

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/go-logr/logr/testr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/test/support/s3server"
)

// writeSecretDir writes a backup secret as Kubernetes mounts it: one file per key.
func writeSecretDir(t *testing.T, keys map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for k, v := range keys {
		if err := os.WriteFile(filepath.Join(dir, k), []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func s3SecretFor(t *testing.T, srv *s3server.Server) string {
	return writeSecretDir(t, map[string]string{
		"accessKeyID":      srv.AccessKey,
		"secretAccessKey":  srv.SecretKey + "\n", // secrets made with echo end in a newline
		"region":           srv.Region,
		"endpoint":         srv.Endpoint,
		"s3ForcePathStyle": "true",
	})
}

func openS3ForTest(t *testing.T, srv *s3server.Server, bucket, prefix string, upload UploadOptions) SnapStore {
	t.Helper()
	store, err := New(t.Context(), Config{
		Provider:  druidv1alpha1.StorageProviderAWS, // the alias must work like S3
		Container: bucket,
		Prefix:    prefix,
		SecretDir: s3SecretFor(t, srv),
		Upload:    upload,
	}, testr.New(t))
	if err != nil {
		t.Fatalf("New S3 store: %v", err)
	}
	t.Cleanup(func() { _ = store.Close() })
	return store
}

func TestS3Conformance(t *testing.T) {
	srv := s3server.Start(t)
	runConformance(t, s3Harness(t, srv, func(t *testing.T, bucket, prefix string, upload UploadOptions) SnapStore {
		return openS3ForTest(t, srv, bucket, prefix, upload)
	}))
}

// s3Harness adapts the conformance suite to a provider reached through the S3 API on srv: open opens the
// provider's store (with its own secret format) on a bucket; the checks bypass the store through srv.
func s3Harness(t *testing.T, srv *s3server.Server, open func(t *testing.T, bucket, prefix string, upload UploadOptions) SnapStore) harness {
	var buckets atomic.Int32
	newBucket := func(t *testing.T) string {
		name := fmt.Sprintf("bucket-%d", buckets.Add(1))
		srv.CreateBucket(t, name)
		return name
	}
	shared := newBucket(t)
	return harness{
		open: func(t *testing.T, prefix string, upload UploadOptions) SnapStore {
			return open(t, newBucket(t), prefix, upload)
		},
		sharedOpen: func(t *testing.T, prefix string) SnapStore {
			return open(t, shared, prefix, UploadOptions{})
		},
		putRaw: func(t *testing.T, key string, data []byte) {
			_, err := srv.Client().PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String(shared), Key: aws.String(key), Body: strings.NewReader(string(data))})
			if err != nil {
				t.Fatalf("putting %s: %v", key, err)
			}
		},
		rewrite: func(t *testing.T, store SnapStore, key string, edit func([]byte) []byte) {
			rewriteFile(t, srv.ObjectPath(store.(*blobStore).location, key), edit)
		},
		assertNoLeftovers: func(t *testing.T, store SnapStore) {
			bucket := store.(*blobStore).location
			out, err := srv.Client().ListMultipartUploads(t.Context(), &s3.ListMultipartUploadsInput{Bucket: aws.String(bucket)})
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Uploads) != 0 {
				t.Fatalf("bucket %s holds %d unfinished multipart uploads after a failed upload", bucket, len(out.Uploads))
			}
			// A part stored after its upload's abort is not always listed; its bytes are on disk.
			if parts := filesUnder(t, srv.ObjectPath(bucket, ".sgwtmp/multipart")); len(parts) != 0 {
				t.Fatalf("bucket %s holds multipart parts after a failed upload: %v", bucket, parts)
			}
		},
		assertChunked: func(t *testing.T, store SnapStore, key string) {
			head, err := srv.Client().HeadObject(t.Context(), &s3.HeadObjectInput{Bucket: aws.String(store.(*blobStore).location), Key: aws.String(key)})
			if err != nil {
				t.Fatal(err)
			}
			// A multipart upload's ETag is "<md5 of part md5s>-<part count>".
			etag := strings.Trim(aws.ToString(head.ETag), `"`)
			if _, parts, ok := strings.Cut(etag, "-"); !ok || parts == "1" {
				t.Fatalf("object %s has ETag %q, want one of a multipart upload", key, etag)
			}
		},
	}
}
