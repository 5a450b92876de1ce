package snapstore

import (
	"context"
	"time"
)

// UploadSweeper is implemented by the stores whose uploads can leave data behind that no snapshot lists
// and no restore reads: staged uploads that their save did not delete. Garbage collection of the store's
// own backups calls it; a store opened to restore from or copy from is never swept.
type UploadSweeper interface {
	// SweepAbandonedUploads deletes what uploads left behind that was begun and last modified before
	// olderThan and that a later full snapshot has superseded. What it could not delete is in the
	// error, or, locked by the bucket's retention, left for a later sweep.
	SweepAbandonedUploads(ctx context.Context, olderThan time.Time) (SweptUploads, error)
}

// SweptUploads is what a sweep did.
type SweptUploads struct {
	Deleted int // abandoned uploads deleted
}

// SweepAbandonedUploads implements UploadSweeper on the current store. The Swift store stages nothing,
// and does not sweep the segments of its large objects: whether a manifest still lists a segment cannot
// be established safely on an eventually consistent store (a read may miss an object that exists), and
// a wrong answer loses a snapshot.
func (w *watchedStore) SweepAbandonedUploads(ctx context.Context, olderThan time.Time) (SweptUploads, error) {
	return retryOnReplaced(w, func(s SnapStore) (SweptUploads, error) {
		sweeper, ok := s.(UploadSweeper)
		if !ok {
			return SweptUploads{}, nil
		}
		return sweeper.SweepAbandonedUploads(ctx, olderThan)
	})
}

var (
	_ UploadSweeper = (*watchedStore)(nil)
	_ UploadSweeper = (*blobStore)(nil)
)
