package snapstore

import (
	"fmt"
	"io"
	"sync/atomic"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/go-logr/logr/testr"

	"github.com/gardener-etcd/gardener-etcd/test/support/azurite"
)

func openABSForTest(t *testing.T, srv *azurite.Server, containerName, prefix string, upload UploadOptions) SnapStore {
	t.Helper()
	store, err := New(t.Context(), Config{
		Provider:         "azure", // the alias must work like ABS
		Container:        containerName,
		Prefix:           prefix,
		EndpointOverride: srv.Endpoint,
		SecretDir:        writeSecretDir(t, map[string]string{"storageAccount": srv.Account, "storageKey": srv.Key + "\n"}),
		Upload:           upload,
	}, testr.New(t))
	if err != nil {
		t.Fatalf("New ABS store: %v", err)
	}
	t.Cleanup(func() { _ = store.Close() })
	return store
}

// TestABSConformance runs the suite against Azurite through the Blob REST API. The harness reaches the
// backend with the Azure SDK's own client, never through Azurite's files.
func TestABSConformance(t *testing.T) {
	srv := azurite.Start(t)
	client := srv.TestClient(t)
	var containers atomic.Int32
	newContainer := func(t *testing.T) string {
		name := fmt.Sprintf("bkp-%d", containers.Add(1))
		srv.CreateContainer(t, name)
		return name
	}
	shared := newContainer(t)
	containerOf := func(store SnapStore) *container.Client {
		return client.ServiceClient().NewContainerClient(store.(*blobStore).location)
	}
	runConformance(t, harness{
		open: func(t *testing.T, prefix string, upload UploadOptions) SnapStore {
			return openABSForTest(t, srv, newContainer(t), prefix, upload)
		},
		sharedOpen: func(t *testing.T, prefix string) SnapStore {
			return openABSForTest(t, srv, shared, prefix, UploadOptions{})
		},
		putRaw: func(t *testing.T, key string, data []byte) {
			if _, err := client.UploadBuffer(t.Context(), shared, key, data, nil); err != nil {
				t.Fatalf("putting %s: %v", key, err)
			}
		},
		rewrite: func(t *testing.T, store SnapStore, key string, edit func([]byte) []byte) {
			name := store.(*blobStore).location
			resp, err := client.DownloadStream(t.Context(), name, key, nil)
			if err != nil {
				t.Fatalf("downloading %s: %v", key, err)
			}
			data, err := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if err != nil {
				t.Fatalf("downloading %s: %v", key, err)
			}
			if _, err := client.UploadBuffer(t.Context(), name, key, edit(data), nil); err != nil {
				t.Fatalf("rewriting %s: %v", key, err)
			}
		},
		// A failed block upload must not commit what it staged: no blob may be left. The staged blocks
		// themselves stay as an uncommitted blob, which is no object (List, Get and Delete do not see it)
		// and which the Blob API cannot remove; the service deletes uncommitted blocks after 7 days.
		assertNoLeftovers: func(t *testing.T, store SnapStore) {
			blobs := func(include container.ListBlobsInclude) []string {
				pager := containerOf(store).NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Include: include})
				var names []string
				for pager.More() {
					page, err := pager.NextPage(t.Context())
					if err != nil {
						t.Fatal(err)
					}
					for _, b := range page.Segment.BlobItems {
						names = append(names, *b.Name)
					}
				}
				return names
			}
			if names := blobs(container.ListBlobsInclude{}); len(names) != 0 {
				t.Fatalf("container %s holds %v after a failed upload", store.(*blobStore).location, names)
			}
			if staged := blobs(container.ListBlobsInclude{UncommittedBlobs: true}); len(staged) != 0 {
				t.Logf("uncommitted blocks of failed uploads (expire after 7 days): %v", staged)
			}
		},
		// Azurite keeps blocks in memory and takes 8 s for 64 MiB on a busy machine; 24 MiB still
		// spans five blocks.
		largeObjectSize: 24 << 20,
		assertChunked: func(t *testing.T, store SnapStore, key string) {
			blocks, err := containerOf(store).NewBlockBlobClient(key).GetBlockList(t.Context(), blockblob.BlockListTypeCommitted, nil)
			if err != nil {
				t.Fatal(err)
			}
			if n := len(blocks.CommittedBlocks); n < 2 {
				t.Fatalf("blob %s consists of %d committed blocks, want a block upload of several", key, n)
			}
		},
	})
}
