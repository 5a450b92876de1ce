package snapstore

import (
	"context"
	"time"
)

// UploadSweeper is implemented by the stores whose uploads can leave data behind that no snapshot lists
// and nothing will ever read: what a process that died mid-upload, or a store that did not answer its
// clean-up, left (S3 multipart uploads, staged uploads). Garbage collection of the store's own backups
// calls it; a store opened to restore from or copy from is never swept.
type UploadSweeper interface {
	// SweepAbandonedUploads deletes what uploads left behind that no snapshot uses and that was last
	// written before olderThan: long enough ago that no upload can still be writing it, nor the store
	// still be completing one. It keeps whatever it cannot decide on, and reports it in the error.
	SweepAbandonedUploads(ctx context.Context, olderThan time.Time) (SweptUploads, error)
}

// SweptUploads is what a sweep did.
type SweptUploads struct {
	Deleted int // abandoned uploads deleted (or, on S3, aborted)
	Objects int // objects deleted
}

// SweepAbandonedUploads implements UploadSweeper on the current store. The Swift store sweeps nothing:
// whether a manifest still lists a segment cannot be established safely on an eventually consistent
// store (a read may miss an object that exists), and a wrong answer loses a snapshot.
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
