package snapstore

import (
	"context"
	"errors"
	"fmt"
	"path"
	"time"

	"gocloud.dev/gcerrors"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
)

// SweepAbandonedUploads implements UploadSweeper: it deletes the staged uploads below <prefix>/staging/
// whose save began, and which were last modified, before olderThan, and whose save began before the
// save of the full snapshot a restore starts from (snapshot.LatestFull). A save copies its
// staged upload to the snapshot's key and deletes it; one is left when the process died before or after
// the copy, or the store did not answer the deletion. No restore reads it, but until a later full
// snapshot is stored it may be the newest copy of the database outside etcd that someone could restore
// by hand, so it stays until then. The beginning of a save is in its staged upload's name, on the same
// clock as the snapshots' names; a backup leader's saves run one at a time, so its save under way never
// began before the newest listed one, and the day's age covers a save of another sidecar. A staged
// upload whose modification time the store does not tell is kept. One that the bucket's retention still
// locks (S3 Object Lock) stays silently until it can be deleted; other stores' refusals are errors.
func (s *blobStore) SweepAbandonedUploads(ctx context.Context, olderThan time.Time) (SweptUploads, error) {
	staged, err := s.stagedUploads(ctx)
	if err != nil || len(staged) == 0 {
		return SweptUploads{}, err
	}
	snaps, err := s.List(ctx)
	if err != nil {
		return SweptUploads{}, err
	}
	base := snapshot.LatestFull(snaps)
	if base == nil {
		return SweptUploads{}, nil
	}
	var swept SweptUploads
	var errs []error
	for _, up := range staged {
		if !up.began.Before(olderThan) || !up.began.Before(base.CreatedOn) {
			continue
		}
		attrs, err := s.bucket.Attributes(ctx, up.key)
		switch {
		case gcerrors.Code(err) == gcerrors.NotFound: // its save deleted it meanwhile
			continue
		case err != nil:
			errs = append(errs, s.wrap(err, "reading the age of staged upload", up.key))
			continue
		case attrs.ModTime.IsZero():
			s.log.Info("Keeping a staged upload whose modification time the store does not tell", "key", up.key)
			continue
		case !attrs.ModTime.Before(olderThan):
			continue
		}
		switch err := s.delete(ctx, up.key); {
		case errors.Is(err, ErrLocked):
		case err != nil:
			errs = append(errs, s.wrap(err, "deleting abandoned staged upload", up.key))
		default:
			swept.Deleted++
			s.log.Info("Deleted an abandoned staged upload", "key", up.key, "saveBegan", up.began, "lastModified", attrs.ModTime,
				"supersededBy", base.SnapName)
		}
	}
	return swept, errors.Join(errs...)
}

// stagedUpload is a staged upload and when its save began.
type stagedUpload struct {
	key   string
	began time.Time
}

// stagedUploads lists the objects directly below <prefix>/staging/ named as SaveStaged names its uploads
// (stagedName), through the store's own listing (which on Local skips files that go away while it
// lists).
func (s *blobStore) stagedUploads(ctx context.Context) ([]stagedUpload, error) {
	dir := path.Join(s.prefix, stagingDir) + "/"
	var staged []stagedUpload
	err := s.keysBelow(ctx, dir, func(key string) {
		if path.Dir(key)+"/" != dir {
			return
		}
		if began, ok := stagedBegan(path.Base(key)); ok {
			staged = append(staged, stagedUpload{key: key, began: began})
		}
	})
	if err != nil {
		return nil, fmt.Errorf("listing %s in %s %s: %w", dir, s.provider, s.location, err)
	}
	return staged, nil
}
