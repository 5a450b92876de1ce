package snapstore

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"path"
	"time"

	"github.com/go-logr/logr"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
)

// blobStore implements SnapStore on any gocloud.dev/blob bucket.
type blobStore struct {
	bucket   *blob.Bucket
	provider string
	location string // container (and root, for Local), for errors and logs
	prefix   string
	upload   UploadOptions
	// downloadStall bounds how long the store may hold a Fetch, a read of its body (fetchWatched) or
	// a listing's page.
	downloadStall time.Duration
	log           logr.Logger
	// beforeWrite lets a provider tune its driver's writer (see gocloud's WriterOptions.BeforeWrite).
	beforeWrite func(as func(any) bool) error
	// deleteObject, if set, replaces the bucket's Delete (see s3VersionDeleter); a missing object is no
	// error, an object the store keeps is ErrLocked.
	deleteObject func(ctx context.Context, key string) error
	// copyObject, if set, replaces the bucket's Copy for staged uploads of size bytes (see SaveStaged).
	copyObject func(ctx context.Context, dst, src string, size int64) error
	// readErrorFailsUpload tells that the driver fails an upload whose source returns an error by
	// itself, after its requests in flight have been answered; stream then leaves its context alone
	// (see stream).
	readErrorFailsUpload bool
	// listKeys, if set, replaces the bucket's listing: it calls add with the key of every object
	// below prefix (see listLocal).
	listKeys func(ctx context.Context, prefix string, add func(key string)) error
	// listPageSize, if set, replaces defaultListPageSize; tests lower it to list in many pages.
	listPageSize int
}

func newBlobStore(bucket *blob.Bucket, provider, location, prefix string, tr transfers, log logr.Logger) *blobStore {
	return &blobStore{
		bucket:        bucket,
		provider:      provider,
		location:      location,
		prefix:        druidv1alpha1.CleanStorePrefix(prefix),
		upload:        tr.upload,
		downloadStall: tr.downloadStall,
		log:           log.WithValues("provider", provider, "container", location, "prefix", prefix),
	}
}

// defaultListPageSize is how many objects one listing request asks for: the most every provider
// returns in a page (S3's and gocloud's default).
const defaultListPageSize = 1000

// List implements SnapStore.
func (s *blobStore) List(ctx context.Context) ([]*snapshot.Snapshot, error) {
	var snaps []*snapshot.Snapshot
	for _, layout := range []snapshot.Layout{snapshot.LayoutV2, snapshot.LayoutV1} {
		listPrefix := path.Join(s.prefix, string(layout)) + "/"
		err := s.keysBelow(ctx, listPrefix, func(key string) {
			if snap, ok := listedSnapshot(s.log, s.prefix, key); ok {
				snaps = append(snaps, snap)
			}
		})
		if err != nil {
			return nil, fmt.Errorf("listing %s in %s %s: %w", listPrefix, s.provider, s.location, err)
		}
	}
	snapshot.SortByLastRevision(snaps)
	return snaps, nil
}

// keysBelow calls add with the key of every object below prefix, page by page. A page the store holds
// for downloadStall fails the listing with ErrListingStalled.
func (s *blobStore) keysBelow(ctx context.Context, prefix string, add func(key string)) error {
	if s.listKeys != nil {
		return s.listKeys(ctx, prefix, add)
	}
	pageSize := cmp.Or(s.listPageSize, defaultListPageSize)
	// Each page may take the store downloadStall; handling a page is not the store's time.
	ctx, watch := watchStallOf(ctx, s.downloadStall, ErrListingStalled)
	defer watch.stop()
	for token := blob.FirstPageToken; len(token) > 0; {
		var page []*blob.ListObject
		var err error
		page, token, err = s.bucket.ListPage(ctx, token, pageSize, &blob.ListOptions{Prefix: prefix})
		if err != nil {
			return stalledOr(ctx, err)
		}
		watch.paused(func() {
			for _, obj := range page {
				if !obj.IsDir {
					add(obj.Key)
				}
			}
		})
	}
	return nil
}

// Fetch implements SnapStore. The download is given up when the store holds it without progress
// (fetchWatched).
func (s *blobStore) Fetch(ctx context.Context, snap *snapshot.Snapshot) (io.ReadCloser, error) {
	key := snap.Key(s.prefix)
	wrap := func(err error, op string) error { return s.wrap(err, op, key) }
	return fetchWatched(ctx, s.downloadStall, wrap, func(ctx context.Context) (io.ReadCloser, error) {
		return s.bucket.NewReader(ctx, key, nil)
	})
}

// Save implements SnapStore.
func (s *blobStore) Save(ctx context.Context, snap *snapshot.Snapshot, r io.Reader) error {
	if snap.Layout() != snapshot.LayoutV2 {
		return fmt.Errorf("saving %s: %w", snap, ErrReadOnlyLayout)
	}
	key := snap.Key(s.prefix)
	n, err := s.stream(ctx, key, r, nil)
	if err != nil {
		return err
	}
	s.log.Info("Saved snapshot", "snapshot", snap.SnapName, "revision", snap.LastRevision, "bytes", n)
	return nil
}

// Delete implements SnapStore.
func (s *blobStore) Delete(ctx context.Context, snap *snapshot.Snapshot) error {
	key := snap.Key(s.prefix)
	if err := s.delete(ctx, key); err != nil {
		return s.wrap(err, "deleting", key)
	}
	s.log.Info("Deleted snapshot", "snapshot", snap.SnapName, "revision", snap.LastRevision)
	return nil
}

// delete removes the object key; a missing one is no error.
func (s *blobStore) delete(ctx context.Context, key string) error {
	if s.deleteObject != nil {
		return s.deleteObject(ctx, key)
	}
	if err := s.bucket.Delete(ctx, key); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
		return err
	}
	return nil
}

// Close implements SnapStore.
func (s *blobStore) Close() error {
	return s.bucket.Close()
}

// wrap adds the operation and location to an error and maps missing objects to ErrNotFound.
func (s *blobStore) wrap(err error, op, key string) error {
	if gcerrors.Code(err) == gcerrors.NotFound {
		return fmt.Errorf("%s %s in %s %s: %w: %w", op, key, s.provider, s.location, ErrNotFound, err)
	}
	return fmt.Errorf("%s %s in %s %s: %w", op, key, s.provider, s.location, err)
}
