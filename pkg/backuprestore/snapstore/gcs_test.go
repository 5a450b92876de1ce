package snapstore

import (
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"testing"

	"cloud.google.com/go/storage"
	"github.com/go-logr/logr/testr"
	"google.golang.org/api/iterator"

	"github.com/gardener-etcd/gardener-etcd/test/support/gcsserver"
)

func openGCSForTest(t *testing.T, srv *gcsserver.Server, bucket, prefix string, upload UploadOptions) SnapStore {
	t.Helper()
	store, err := New(t.Context(), Config{
		Provider:         "gcp", // the alias must work like GCS
		Container:        bucket,
		Prefix:           prefix,
		EndpointOverride: srv.Endpoint, // an emulator needs no service account
		Upload:           upload,
	}, testr.New(t))
	if err != nil {
		t.Fatalf("New GCS store: %v", err)
	}
	t.Cleanup(func() { _ = store.Close() })
	return store
}

// TestGCSConformance runs the suite against fake-gcs-server through the GCS JSON API. The harness reaches
// the backend with Google's own storage client.
func TestGCSConformance(t *testing.T) {
	srv := gcsserver.Start(t)
	client := srv.TestClient(t)
	var buckets atomic.Int32
	newBucket := func(t *testing.T) string {
		name := fmt.Sprintf("bkp-%d", buckets.Add(1))
		srv.CreateBucket(t, name)
		return name
	}
	shared := newBucket(t)
	write := func(t *testing.T, bucket, key string, data []byte) {
		w := client.Bucket(bucket).Object(key).NewWriter(t.Context())
		_, err := w.Write(data)
		if err = errors.Join(err, w.Close()); err != nil {
			t.Fatalf("writing %s: %v", key, err)
		}
	}
	runConformance(t, harness{
		open: func(t *testing.T, prefix string, upload UploadOptions) SnapStore {
			return openGCSForTest(t, srv, newBucket(t), prefix, upload)
		},
		sharedOpen: func(t *testing.T, prefix string) SnapStore {
			return openGCSForTest(t, srv, shared, prefix, UploadOptions{})
		},
		putRaw: func(t *testing.T, key string, data []byte) { write(t, shared, key, data) },
		rewrite: func(t *testing.T, store SnapStore, key string, edit func([]byte) []byte) {
			bucket := store.(*blobStore).location
			r, err := client.Bucket(bucket).Object(key).NewReader(t.Context())
			if err != nil {
				t.Fatalf("reading %s: %v", key, err)
			}
			data, err := io.ReadAll(r)
			_ = r.Close()
			if err != nil {
				t.Fatalf("reading %s: %v", key, err)
			}
			write(t, bucket, key, edit(data))
		},
		// GCS has no API to list resumable upload sessions (an unfinished one is never an object and
		// expires on its own); what can be checked is that no object, of any generation, was left.
		assertNoLeftovers: func(t *testing.T, store SnapStore) {
			bucket := store.(*blobStore).location
			it := client.Bucket(bucket).Objects(t.Context(), &storage.Query{Versions: true})
			var names []string
			for {
				attrs, err := it.Next()
				if errors.Is(err, iterator.Done) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				names = append(names, attrs.Name)
			}
			if len(names) != 0 {
				t.Fatalf("bucket %s holds %v after a failed upload", bucket, names)
			}
		},
		// fake-gcs-server keeps resumable uploads in memory and takes 8 s for 64 MiB on a busy machine;
		// 24 MiB still spans five chunks.
		largeObjectSize: 24 << 20,
		// assertChunked is nil: a GCS object does not record how it was uploaded (resumable uploads in
		// chunks of UploadOptions.ChunkSize yield an ordinary object).
	})
}
