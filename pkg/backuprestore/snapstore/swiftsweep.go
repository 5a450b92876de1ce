package snapstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/objectstorage/v1/objects"
	"github.com/gophercloud/gophercloud/v2/pagination"
)

// Segments can outlive their upload: the process dies mid-upload, a PUT cut short is completed by Swift
// after the clean-up, or a manifest goes unanswered and its segments are kept because Swift may still
// write it. None of them lists as a snapshot, but each may be as large as a full snapshot, and a sidecar
// in a crash loop leaves one per attempt. A sweep deletes them once they are certainly unused.
//
// Which manifest uses an upload cannot be read from the segments, so every upload directory is named
// with swiftKeyedSuffix and gets a swiftKeyObject naming the manifest's key, written and answered before
// the manifest is sent. An upload without it never had a manifest sent; one with it is in use exactly
// when the object at that key is a manifest that lists its segments.
const (
	swiftKeyedSuffix = ".keyed"
	swiftKeyObject   = "key"
	// swiftMaxKeyBytes bounds the key object read back (a key is a prefix and a snapshot name).
	swiftMaxKeyBytes = 4 << 10
)

// SweepAbandonedUploads implements UploadSweeper. It deletes the keyed upload directories below
// <prefix>/segments/ whose newest object was written before olderThan and that no manifest uses. What
// it cannot decide (a read fails, the key names another prefix) is kept. Directories without the keyed
// suffix come from versions that named no key; any manifest may list them, so they are only counted.
func (s *swiftStore) SweepAbandonedUploads(ctx context.Context, olderThan time.Time) (SweptUploads, error) {
	uploads, err := s.listUploads(ctx)
	if err != nil {
		return SweptUploads{}, err
	}
	var swept SweptUploads
	var errs []error
	for _, up := range uploads {
		if !strings.HasSuffix(up.dir, swiftKeyedSuffix) {
			swept.Unkeyed++
			continue
		}
		if !up.lastWritten.Before(olderThan) {
			continue
		}
		key, used, err := s.uploadUsed(ctx, up)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if used {
			continue
		}
		if err := s.deleteUpload(ctx, up); err != nil {
			errs = append(errs, err)
			continue
		}
		swept.Deleted++
		swept.Objects += len(up.objects)
		s.log.Info("Deleted the objects of an abandoned upload", "upload", up.dir+"/", "objects", len(up.objects),
			"lastWritten", up.lastWritten, "manifestKey", key)
	}
	return swept, errors.Join(errs...)
}

// swiftUploadDir is what the listing found of one upload directory.
type swiftUploadDir struct {
	dir         string   // <prefix>/segments/<upload>
	objects     []string // its segments and its key object
	hasKey      bool
	lastWritten time.Time // of its newest object
}

// listUploads groups the objects below <prefix>/segments/ by upload directory.
func (s *swiftStore) listUploads(ctx context.Context) ([]*swiftUploadDir, error) {
	root := path.Join(s.prefix, swiftSegmentsDir) + "/"
	byDir := map[string]*swiftUploadDir{}
	err := objects.List(s.client, s.container, objects.ListOpts{Prefix: root, Limit: s.listLimit}).EachPage(ctx,
		func(_ context.Context, page pagination.Page) (bool, error) {
			infos, err := objects.ExtractInfo(page)
			for _, info := range infos {
				upload, rest, ok := strings.Cut(strings.TrimPrefix(info.Name, root), "/")
				if !ok || upload == "" {
					continue // not inside an upload directory: not written by an upload
				}
				dir := root + upload
				up := byDir[dir]
				if up == nil {
					up = &swiftUploadDir{dir: dir}
					byDir[dir] = up
				}
				up.objects = append(up.objects, info.Name)
				up.hasKey = up.hasKey || rest == swiftKeyObject
				if info.LastModified.After(up.lastWritten) {
					up.lastWritten = info.LastModified
				}
			}
			return err == nil, err
		})
	if err != nil {
		return nil, fmt.Errorf("listing the uploads below %s in Swift container %s: %w", root, s.container, err)
	}
	uploads := make([]*swiftUploadDir, 0, len(byDir))
	for _, up := range byDir {
		uploads = append(uploads, up)
	}
	slices.SortFunc(uploads, func(a, b *swiftUploadDir) int { return strings.Compare(a.dir, b.dir) })
	return uploads, nil
}

// uploadUsed tells whether a manifest lists segments of the upload, and returns the key its key object
// names. Without a key object no manifest was sent for it.
func (s *swiftStore) uploadUsed(ctx context.Context, up *swiftUploadDir) (string, bool, error) {
	if !up.hasKey {
		return "", false, nil
	}
	name := path.Join(up.dir, swiftKeyObject)
	res := objects.Download(ctx, s.client, s.container, name, nil)
	if res.Err != nil {
		// Also a key object deleted since the listing: someone else is deleting this upload.
		return "", true, s.wrap(res.Err, "reading the key of upload", up.dir)
	}
	raw, err := io.ReadAll(io.LimitReader(res.Body, swiftMaxKeyBytes))
	_ = res.Body.Close()
	if err != nil {
		return "", true, s.wrap(err, "reading the key of upload", up.dir)
	}
	key := string(raw)
	if !strings.HasPrefix(key, s.prefix+"/") {
		return key, true, fmt.Errorf("upload %s in Swift container %s names key %q outside prefix %s: left alone", up.dir, s.container, key, s.prefix)
	}
	segments, err := s.segmentsOf(ctx, key)
	if err != nil {
		return key, true, err
	}
	return key, slices.ContainsFunc(segments, func(seg string) bool { return path.Dir(seg) == up.dir }), nil
}

// deleteUpload deletes an upload's segments, then its key object, so that a sweep cut short finds the
// rest again and decides on it as before.
func (s *swiftStore) deleteUpload(ctx context.Context, up *swiftUploadDir) error {
	key := path.Join(up.dir, swiftKeyObject)
	segments := slices.DeleteFunc(slices.Clone(up.objects), func(name string) bool { return name == key })
	if err := s.deleteObjects(ctx, segments); err != nil {
		return fmt.Errorf("deleting the segments of abandoned upload %s: %w", up.dir, err)
	}
	if up.hasKey {
		if err := s.deleteObject(ctx, key); err != nil {
			return fmt.Errorf("deleting the key of abandoned upload %s: %w", up.dir, err)
		}
	}
	return nil
}

// withKeyObjects adds to segments the key objects of their keyed upload directories: they go when the
// segments go (a snapshot deleted or replaced).
func withKeyObjects(segments []string) []string {
	out := slices.Clone(segments)
	for _, seg := range segments {
		dir := path.Dir(seg)
		key := path.Join(dir, swiftKeyObject)
		if strings.HasSuffix(dir, swiftKeyedSuffix) && path.Base(path.Dir(dir)) == swiftSegmentsDir && !slices.Contains(out, key) {
			out = append(out, key)
		}
	}
	return out
}
