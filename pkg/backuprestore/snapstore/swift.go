package snapstore

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path"
	"time"

	"github.com/go-logr/logr"
	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/objectstorage/v1/objects"
	"github.com/gophercloud/gophercloud/v2/pagination"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
)

// swiftStore implements SnapStore and StagedSaver on an OpenStack Swift container with gophercloud
// (gocloud.dev has no Swift driver).
//
// Objects up to one chunk are stored whole. Larger ones are Static Large Objects: segments of at least
// the chunk size below <prefix>/segments/<upload>/ in the same container (no second container to create
// or grant), then a manifest at the snapshot's key, which makes the object appear atomically: Swift checks
// every segment's size and MD5 before it accepts the manifest. A failed upload deletes its segments;
// deleting or replacing a snapshot deletes the segments of its manifest.
type swiftStore struct {
	client    *gophercloud.ServiceClient
	container string
	prefix    string
	upload    UploadOptions
	// downloadStall bounds how long the store may hold a Fetch, a read of its body (fetchWatched) or
	// a listing's page.
	downloadStall time.Duration
	log           logr.Logger
	// listLimit is the page size of listings; 0 leaves it to the server (10,000 by default).
	listLimit int
}

func openSwift(ctx context.Context, cfg swiftConfig, prefix string, tr transfers, log logr.Logger) (SnapStore, error) {
	client, err := cfg.swiftClient(ctx)
	if err != nil {
		return nil, fmt.Errorf("opening Swift container %s: %w", cfg.container, err)
	}
	return &swiftStore{
		client:        client,
		container:     cfg.container,
		prefix:        druidv1alpha1.CleanStorePrefix(prefix),
		upload:        tr.upload,
		downloadStall: tr.downloadStall,
		log:           log.WithValues("provider", ProviderSwift, "container", cfg.container, "prefix", prefix, "auth", cfg.auth),
	}, nil
}

// swiftSegmentsDir holds the segments of large objects, beside v1/, v2/ and staging/, so that listings
// of snapshots never see them.
const swiftSegmentsDir = "segments"

// List implements SnapStore. The v2 layout is listed one level deep (segments that the upstream sidecar
// stored below a snapshot's key come back as one pseudo-directory, not as objects); v1 has its snapshots
// in Backup-* directories and is listed in full. The pager follows Swift's pages to the end; a page the
// store holds for downloadStall fails the listing with ErrListingStalled.
func (s *swiftStore) List(ctx context.Context) ([]*snapshot.Snapshot, error) {
	var snaps []*snapshot.Snapshot
	for _, layout := range []snapshot.Layout{snapshot.LayoutV2, snapshot.LayoutV1} {
		opts := objects.ListOpts{Prefix: path.Join(s.prefix, string(layout)) + "/", Limit: s.listLimit}
		if layout == snapshot.LayoutV2 {
			opts.Delimiter = "/"
		}
		// Each page may take the store downloadStall; handling a page is not the store's time.
		wctx, watch := watchStallOf(ctx, s.downloadStall, ErrListingStalled)
		err := objects.List(s.client, s.container, opts).EachPage(wctx, func(_ context.Context, page pagination.Page) (bool, error) {
			infos, err := objects.ExtractInfo(page)
			if err != nil {
				return false, err
			}
			watch.paused(func() {
				for _, info := range infos {
					if info.Name == "" { // a pseudo-directory
						continue
					}
					if snap, ok := listedSnapshot(s.log, s.prefix, info.Name); ok {
						snaps = append(snaps, snap)
					}
				}
			})
			return true, nil
		})
		err = stalledOr(wctx, err)
		watch.stop()
		if err != nil {
			return nil, fmt.Errorf("listing %s in Swift container %s: %w", opts.Prefix, s.container, err)
		}
	}
	snapshot.SortByLastRevision(snaps)
	return snaps, nil
}

// Fetch implements SnapStore. Large objects are joined by Swift, which checks each segment against the
// manifest while it streams. The download is given up when the store holds it without progress
// (fetchWatched).
func (s *swiftStore) Fetch(ctx context.Context, snap *snapshot.Snapshot) (io.ReadCloser, error) {
	key := snap.Key(s.prefix)
	wrap := func(err error, op string) error { return s.wrap(err, op, key) }
	return fetchWatched(ctx, s.downloadStall, wrap, func(ctx context.Context) (io.ReadCloser, error) {
		res := objects.Download(ctx, s.client, s.container, key, nil)
		return res.Body, res.Err
	})
}

// Delete implements SnapStore: the object, then its segments.
func (s *swiftStore) Delete(ctx context.Context, snap *snapshot.Snapshot) error {
	key := snap.Key(s.prefix)
	segments, err := s.segmentsOf(ctx, key)
	if err != nil {
		return err
	}
	if err := s.deleteObject(ctx, key); err != nil {
		return err
	}
	if err := s.deleteObjects(ctx, segments); err != nil {
		return fmt.Errorf("deleted %s, but not all of its %d segments: %w", key, len(segments), err)
	}
	s.log.Info("Deleted snapshot", "snapshot", snap.SnapName, "revision", snap.LastRevision, "segments", len(segments))
	return nil
}

// Close implements SnapStore.
func (s *swiftStore) Close() error {
	s.client.HTTPClient.CloseIdleConnections()
	return nil
}

// deleteObject deletes one object (not the segments of a manifest); a missing object is no error.
func (s *swiftStore) deleteObject(ctx context.Context, key string) error {
	if err := objects.Delete(ctx, s.client, s.container, key, nil).Err; err != nil && !notFound(err) {
		return s.wrap(err, "deleting", key)
	}
	return nil
}

func notFound(err error) bool {
	return gophercloud.ResponseCodeIs(err, http.StatusNotFound)
}

// wrap adds the operation and location to an error and maps missing objects to ErrNotFound.
func (s *swiftStore) wrap(err error, op, key string) error {
	if notFound(err) {
		return fmt.Errorf("%s %s in Swift container %s: %w: %w", op, key, s.container, ErrNotFound, err)
	}
	return fmt.Errorf("%s %s in Swift container %s: %w", op, key, s.container, err)
}
