package snapstore

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"
	"time"

	"gocloud.dev/blob"
)

// SweepAbandonedUploads implements UploadSweeper. Two kinds of uploads can outlive their save: a staged
// upload below <prefix>/staging/ whose save did not copy and delete it (the process died in between, or
// its clean-up failed), and on S3 a multipart upload the process did not live to complete or abort.
// Neither is ever read: a staged upload becomes a snapshot only through the copy its own save makes
// right after it, and an incomplete multipart upload is no object. A staged upload the bucket's
// retention still locks (S3 Object Lock) stays until it can be deleted.
func (s *blobStore) SweepAbandonedUploads(ctx context.Context, olderThan time.Time) (SweptUploads, error) {
	var swept SweptUploads
	var errs []error
	staged, err := s.abandonedStagedUploads(ctx, olderThan)
	if err != nil {
		errs = append(errs, err)
	}
	for _, key := range staged {
		switch err := s.delete(ctx, key); {
		case errors.Is(err, ErrLocked):
		case err != nil:
			errs = append(errs, s.wrap(err, "deleting abandoned staged upload", key))
		default:
			swept.Deleted++
			swept.Objects++
			s.log.Info("Deleted an abandoned staged upload", "key", key)
		}
	}
	if s.abortAbandonedMultipart != nil {
		aborted, err := s.abortAbandonedMultipart(ctx, s.prefix+"/", olderThan)
		swept.Deleted += aborted
		if err != nil {
			errs = append(errs, fmt.Errorf("aborting abandoned multipart uploads below %s/ in %s %s: %w", s.prefix, s.provider, s.location, err))
		}
	}
	return swept, errors.Join(errs...)
}

// abandonedStagedUploads lists the staged uploads (named by SaveStaged: a number below
// <prefix>/staging/) last written before olderThan.
func (s *blobStore) abandonedStagedUploads(ctx context.Context, olderThan time.Time) ([]string, error) {
	dir := path.Join(s.prefix, stagingDir) + "/"
	var keys []string
	err := s.objectsBelow(ctx, dir, func(obj *blob.ListObject) {
		name, ok := path.Base(obj.Key), path.Dir(obj.Key)+"/" == dir
		if _, err := strconv.ParseInt(name, 10, 64); ok && err == nil && obj.ModTime.Before(olderThan) {
			keys = append(keys, obj.Key)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("listing %s in %s %s: %w", dir, s.provider, s.location, err)
	}
	return keys, nil
}
