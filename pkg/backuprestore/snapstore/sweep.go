package snapstore

import (
	"context"
	"time"
)

// UploadSweeper is implemented by stores whose uploads can leave objects behind that no snapshot lists
// and no clean-up of the upload could delete safely (the Swift store's segments). Garbage collection of
// the store's own backups calls it; a store opened to restore from or copy from is never swept.
type UploadSweeper interface {
	// SweepAbandonedUploads deletes what uploads left behind that no snapshot uses and that was last
	// written before olderThan: long enough ago that no upload can still be writing it, nor the store
	// still be completing one. It keeps whatever it cannot decide on, and reports it in the error.
	SweepAbandonedUploads(ctx context.Context, olderThan time.Time) (SweptUploads, error)
}

// SweptUploads is what a sweep did.
type SweptUploads struct {
	Deleted int // abandoned uploads whose objects were deleted
	Objects int // objects deleted
	// Unkeyed counts upload directories written by a version that did not record which manifest uses
	// them; a sweep leaves them alone.
	Unkeyed int
}

// SweepAbandonedUploads implements UploadSweeper on the current store; a store that leaves nothing
// behind sweeps nothing.
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
	_ UploadSweeper = (*swiftStore)(nil)
)
