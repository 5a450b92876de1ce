package snapstore

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"
	"time"

	"gocloud.dev/gcerrors"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
)

// SweepAbandonedUploads implements UploadSweeper: it deletes the staged uploads below <prefix>/staging/
// last modified before olderThan and before the newest full snapshot the store lists was taken. A save
// copies its staged upload to the snapshot's key and deletes it; one is left when the process died
// before or after the copy, or the store did not answer the deletion. No restore reads it, but until a
// later full snapshot is stored it may be the newest copy of the database outside etcd that someone
// could restore by hand, so it stays until then. One that the bucket's retention still locks (S3
// Object Lock) stays silently until it can be deleted; other stores' refusals are errors.
func (s *blobStore) SweepAbandonedUploads(ctx context.Context, olderThan time.Time) (SweptUploads, error) {
	staged, err := s.stagedUploads(ctx)
	if err != nil || len(staged) == 0 {
		return SweptUploads{}, err
	}
	snaps, err := s.List(ctx)
	if err != nil {
		return SweptUploads{}, err
	}
	if newest, ok := newestFullTaken(snaps); !ok {
		return SweptUploads{}, nil
	} else if newest.Before(olderThan) {
		olderThan = newest
	}
	var swept SweptUploads
	var errs []error
	for _, key := range staged {
		attrs, err := s.bucket.Attributes(ctx, key)
		switch {
		case gcerrors.Code(err) == gcerrors.NotFound: // its save deleted it meanwhile
			continue
		case err != nil:
			errs = append(errs, s.wrap(err, "reading the age of staged upload", key))
			continue
		case !attrs.ModTime.Before(olderThan):
			continue
		}
		switch err := s.delete(ctx, key); {
		case errors.Is(err, ErrLocked):
		case err != nil:
			errs = append(errs, s.wrap(err, "deleting abandoned staged upload", key))
		default:
			swept.Deleted++
			swept.Objects++
			s.log.Info("Deleted an abandoned staged upload", "key", key, "lastModified", attrs.ModTime)
		}
	}
	return swept, errors.Join(errs...)
}

// stagedUploads lists the keys below <prefix>/staging/ named as SaveStaged names its uploads (a number),
// through the store's own listing (which on Local skips files that go away while it lists).
func (s *blobStore) stagedUploads(ctx context.Context) ([]string, error) {
	dir := path.Join(s.prefix, stagingDir) + "/"
	var keys []string
	err := s.keysBelow(ctx, dir, func(key string) {
		if _, err := strconv.ParseInt(path.Base(key), 10, 64); err == nil && path.Dir(key)+"/" == dir {
			keys = append(keys, key)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("listing %s in %s %s: %w", dir, s.provider, s.location, err)
	}
	return keys, nil
}

// newestFullTaken is when the newest listed full snapshot was taken.
func newestFullTaken(snaps []*snapshot.Snapshot) (time.Time, bool) {
	var newest time.Time
	for _, snap := range snaps {
		if snap.Kind == snapshot.KindFull && snap.CreatedOn.After(newest) {
			newest = snap.CreatedOn
		}
	}
	return newest, !newest.IsZero()
}
