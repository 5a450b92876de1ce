package snapstore

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/gophercloud/gophercloud/v2/openstack/objectstorage/v1/objects"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/test/support/swiftserver"
)

// swiftFixture is one Swift server shared by the subtests of a test, with a fresh container per store.
type swiftFixture struct {
	srv        *swiftserver.Server
	containers atomic.Int32
}

func newSwiftFixture(t *testing.T) *swiftFixture {
	return &swiftFixture{srv: swiftserver.Start(t)}
}

func (f *swiftFixture) newContainer(t *testing.T) string {
	name := fmt.Sprintf("bkp-%d", f.containers.Add(1))
	f.srv.CreateContainer(t, name)
	return name
}

func (f *swiftFixture) secret(t *testing.T) string {
	return writeSecretDir(t, map[string]string{
		"authURL":  f.srv.AuthURL,
		"username": f.srv.User,
		"password": f.srv.Key + "\n", // secrets made with echo end in a newline
	})
}

func (f *swiftFixture) open(t *testing.T, container, prefix string, upload UploadOptions) *swiftStore {
	t.Helper()
	store, err := New(t.Context(), Config{
		Provider:  druidv1alpha1.StorageProviderOpenStack, // the alias must work like Swift
		Container: container,
		Prefix:    prefix,
		SecretDir: f.secret(t),
		Upload:    upload,
	}, testr.New(t))
	if err != nil {
		t.Fatalf("New Swift store: %v", err)
	}
	t.Cleanup(func() { _ = store.Close() })
	return store.(*swiftStore)
}

// containerObjects lists every object of the store's container, whatever its prefix.
func containerObjects(t *testing.T, s *swiftStore) []string {
	t.Helper()
	names, err := s.listNames(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	return names
}

func putRawSwift(t *testing.T, s *swiftStore, key string, data []byte, manifest string) {
	t.Helper()
	_, err := objects.Create(t.Context(), s.client, s.container, key, objects.CreateOpts{Content: bytes.NewReader(data), ObjectManifest: manifest}).Extract()
	if err != nil {
		t.Fatalf("putting %s: %v", key, err)
	}
}

func TestSwiftConformance(t *testing.T) {
	f := newSwiftFixture(t)
	shared := f.newContainer(t)
	var raw *swiftStore
	runConformance(t, harness{
		open: func(t *testing.T, prefix string, upload UploadOptions) SnapStore {
			return f.open(t, f.newContainer(t), prefix, upload)
		},
		sharedOpen: func(t *testing.T, prefix string) SnapStore {
			s := f.open(t, shared, prefix, UploadOptions{})
			raw = s
			return s
		},
		putRaw: func(t *testing.T, key string, data []byte) {
			putRawSwift(t, raw, key, data, "")
		},
		// Objects are rewritten through Swift's API: editing the object server's files would make Swift
		// quarantine them (its etag check), which is Swift's own protection rather than ours.
		rewrite: func(t *testing.T, store SnapStore, key string, edit func([]byte) []byte) {
			s := store.(*swiftStore)
			res := objects.Download(t.Context(), s.client, s.container, key, nil)
			data, err := res.ExtractContent()
			if err != nil {
				t.Fatalf("downloading %s: %v", key, err)
			}
			putRawSwift(t, s, key, edit(data), "")
		},
		assertNoLeftovers: func(t *testing.T, store SnapStore) {
			if names := containerObjects(t, store.(*swiftStore)); len(names) != 0 {
				t.Fatalf("container holds %v after the failed uploads", names)
			}
		},
		assertChunked: func(t *testing.T, store SnapStore, key string) {
			s := store.(*swiftStore)
			head, err := objects.Get(t.Context(), s.client, s.container, key, nil).Extract()
			if err != nil {
				t.Fatal(err)
			}
			segments, err := s.segmentsOf(t.Context(), key)
			if err != nil || !head.StaticLargeObject || len(segments) < 2 {
				t.Fatalf("object %s: static large object %v with segments %v (%v), want one of several segments", key, head.StaticLargeObject, segments, err)
			}
		},
		allObjects: func(t *testing.T, store SnapStore) []string { return containerObjects(t, store.(*swiftStore)) },
	})
	t.Run("large objects are replaced and deleted with their segments", func(t *testing.T) { testSwiftSegmentLifecycle(t, f) })
	t.Run("a cancelled large upload leaves no segment", func(t *testing.T) { testSwiftCancelledUpload(t, f) })
	t.Run("dynamic large objects of the upstream sidecar are read and deleted", func(t *testing.T) { testSwiftUpstreamLayout(t, f) })
	t.Run("endpoint override replaces the storage URL", func(t *testing.T) { testSwiftEndpointOverride(t, f) })
	t.Run("a refused token is renewed by logging in again", func(t *testing.T) { testSwiftReauth(t, f) })
	t.Run("wrong credentials fail at New naming the auth URL", func(t *testing.T) { testSwiftWrongKey(t, f) })
}

// testSwiftSegmentLifecycle: a rewritten large snapshot leaves only its new segments, one whose name the
// bytes contradict leaves none, and Delete removes the manifest and every segment.
func testSwiftSegmentLifecycle(t *testing.T, f *swiftFixture) {
	const chunk = 1 << 20
	store := f.open(t, f.newContainer(t), "seg/etcd-main", UploadOptions{ChunkSize: chunk, MaxParallelChunks: 2})
	snap := snapshot.NewFull(77, time.Unix(1700000000, 0), snapshot.CompressionNone, false)
	first := fullSnapshotBytes(3*chunk+100, 1) // four segments
	save(t, store, snap, first)
	if got := containerObjects(t, store); len(got) != 5 {
		t.Fatalf("container holds %v, want the manifest and 4 segments", got)
	}
	second := fullSnapshotBytes(2*chunk+100, 2) // three segments
	save(t, store, snap, second)
	if got := containerObjects(t, store); len(got) != 4 {
		t.Fatalf("after rewriting, container holds %v, want the manifest and the 3 new segments", got)
	}
	if !bytes.Equal(fetch(t, store, snap), second) {
		t.Fatal("rewritten large object fetched with other contents")
	}

	other := snapshot.NewFull(78, time.Unix(1700000100, 0), snapshot.CompressionNone, false)
	_, err := store.SaveExpected(t.Context(), bytes.NewReader(first), other, func() (*snapshot.Snapshot, error) {
		return snapshot.NewFull(79, time.Unix(1700000100, 0), snapshot.CompressionNone, false), nil
	})
	if err == nil || !strings.Contains(err.Error(), ErrUnexpectedName.Error()) {
		t.Fatalf("SaveExpected of a large object with contradicting bytes: err = %v", err)
	}
	if got := containerObjects(t, store); len(got) != 4 {
		t.Fatalf("after a refused large upload, container holds %v, want only the earlier object", got)
	}

	staged, err := store.SaveStaged(t.Context(), bytes.NewReader(first), func() (*snapshot.Snapshot, error) { return other, nil })
	if err != nil || staged.SnapName != other.SnapName || !bytes.Equal(fetch(t, store, other), first) {
		t.Fatalf("SaveStaged of a large object: %v, %v", staged, err)
	}
	for _, s := range []*snapshot.Snapshot{snap, other} {
		if err := store.Delete(t.Context(), s); err != nil {
			t.Fatal(err)
		}
	}
	if got := containerObjects(t, store); len(got) != 0 {
		t.Fatalf("after deleting every snapshot, container holds %v", got)
	}
}

// cancelAfter reads from r and cancels once n bytes have been read, as a sidecar shutting down mid-upload.
type cancelAfter struct {
	r      io.Reader
	n      int64
	cancel context.CancelFunc
}

func (c *cancelAfter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if c.n -= int64(n); c.n <= 0 {
		c.cancel()
	}
	return n, err
}

// testSwiftCancelledUpload: cancelling the context while segments upload fails the save and still deletes
// every segment (the clean-up does not use the cancelled context).
func testSwiftCancelledUpload(t *testing.T, f *swiftFixture) {
	const chunk = 1 << 20
	store := f.open(t, f.newContainer(t), "cancel", UploadOptions{ChunkSize: chunk, MaxParallelChunks: 2})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	snap := snapshot.NewFull(5, time.Unix(1700000000, 0), snapshot.CompressionNone, false)
	src := &cancelAfter{r: io.LimitReader(newGenerator(9), 8*chunk), n: 3 * chunk, cancel: cancel}
	if err := store.Save(ctx, snap, src); err == nil {
		t.Fatal("Save with a context cancelled mid-upload succeeded")
	}
	if got := containerObjects(t, store); len(got) != 0 {
		t.Fatalf("a cancelled upload left %v", got)
	}
}

// testSwiftUpstreamLayout: the upstream sidecar stored large snapshots as dynamic large objects, with
// segments below the snapshot's key. They are listed once, fetched joined and deleted with the segments.
func testSwiftUpstreamLayout(t *testing.T, f *swiftFixture) {
	store := f.open(t, f.newContainer(t), "old/etcd-main", UploadOptions{})
	snap := snapshot.NewFull(500, time.Unix(1600000000, 0), snapshot.CompressionNone, false)
	key := snap.Key("old/etcd-main")
	data := fullSnapshotBytes(3000, 4)
	putRawSwift(t, store, key+"/0000000001", data[:1000], "")
	putRawSwift(t, store, key+"/0000000002", data[1000:], "")
	putRawSwift(t, store, key, nil, store.container+"/"+key)
	neighbour := snapshot.NewIncr(501, 510, time.Unix(1600000100, 0), snapshot.CompressionNone)
	putRawSwift(t, store, neighbour.Key("old/etcd-main"), []byte("delta"), "")

	if got, want := keys(list(t, store)), []string{snap.RelativeKey(), neighbour.RelativeKey()}; !slices.Equal(got, want) {
		t.Fatalf("List = %v, want %v", got, want)
	}
	if !bytes.Equal(fetch(t, store, snap), data) {
		t.Fatal("dynamic large object fetched with other contents")
	}
	if err := store.Delete(t.Context(), snap); err != nil {
		t.Fatal(err)
	}
	if got, want := containerObjects(t, store), []string{neighbour.Key("old/etcd-main")}; !slices.Equal(got, want) {
		t.Fatalf("after Delete, container holds %v, want %v", got, want)
	}
}

// testSwiftEndpointOverride: --store-endpoint-override replaces the storage URL TempAuth returns; an
// unreachable one makes requests fail, the right one works.
func testSwiftEndpointOverride(t *testing.T, f *swiftFixture) {
	container := f.newContainer(t)
	for endpoint, works := range map[string]bool{"http://127.0.0.1:1/v1/" + swiftserver.Account: false, f.srv.StorageURL: true} {
		store, err := New(t.Context(), Config{Provider: druidv1alpha1.StorageProviderSwift, Container: container, Prefix: "p",
			SecretDir: f.secret(t), EndpointOverride: endpoint}, testr.New(t))
		if err != nil {
			t.Fatal(err)
		}
		_, err = store.List(t.Context())
		_ = store.Close()
		if (err == nil) != works {
			t.Fatalf("endpoint %s: List err = %v, want success %v", endpoint, err, works)
		}
	}
}

// testSwiftReauth: a store whose token became invalid (here: a forged one) logs in again by itself.
func testSwiftReauth(t *testing.T, f *swiftFixture) {
	store := f.open(t, f.newContainer(t), "reauth", UploadOptions{})
	store.client.ProviderClient.SetToken("AUTH_tk00000000000000000000000000000000")
	snap := snapshot.NewIncr(1, 2, time.Unix(1700000000, 0), snapshot.CompressionNone)
	save(t, store, snap, []byte("after a new login"))
	if got := store.client.ProviderClient.Token(); got == "AUTH_tk00000000000000000000000000000000" {
		t.Fatal("the store kept the refused token")
	}
	if !bytes.Equal(fetch(t, store, snap), []byte("after a new login")) {
		t.Fatal("fetched other contents")
	}
}

func testSwiftWrongKey(t *testing.T, f *swiftFixture) {
	secret := writeSecretDir(t, map[string]string{"authURL": f.srv.AuthURL, "username": f.srv.User, "password": "wrong"})
	_, err := New(t.Context(), Config{Provider: druidv1alpha1.StorageProviderSwift, Container: "c", SecretDir: secret}, testr.New(t))
	if err == nil || !strings.Contains(err.Error(), f.srv.AuthURL) || !strings.Contains(err.Error(), "401") {
		t.Fatalf("New with a wrong key: err = %v, want a 401 naming %s", err, f.srv.AuthURL)
	}
}
