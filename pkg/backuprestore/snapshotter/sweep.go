package snapshotter

import (
	"context"
	"time"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
)

const (
	// abandonedUploadAge is how long before a sweep an upload must have been begun (by the sidecars'
	// clock) and last modified (by the store's) for the sweep to delete it (snapstore.UploadSweeper),
	// besides being superseded by a later full snapshot. A staged upload is copied to its snapshot's key
	// right after it is written: a day is far longer than that takes.
	abandonedUploadAge = 24 * time.Hour
	// uploadSweepInterval is how often a backup leader sweeps, after its first garbage collection: a
	// sweep lists the staged uploads and the snapshots and asks an old staged upload's age, which every
	// run (a minute by default) would repeat for nothing, as abandoned uploads are rare.
	uploadSweepInterval = 12 * time.Hour
	// sweepTimeout bounds a sweep, which holds up garbage collection while it runs.
	sweepTimeout = 5 * time.Minute
)

// sweepAbandonedUploads has the store delete what interrupted uploads left behind, when it is a store
// that can leave some and this snapshotter (one backup-leader term) has not swept in the last
// uploadSweepInterval. A failed sweep is logged and tried again at the next interval; it does not fail
// garbage collection. The caller holds gcMu.
func (s *Snapshotter) sweepAbandonedUploads(ctx context.Context, now time.Time) {
	sweeper, ok := s.store.(snapstore.UploadSweeper)
	if !ok || (!s.lastSweep.IsZero() && now.Sub(s.lastSweep) < uploadSweepInterval) {
		return
	}
	s.lastSweep = now
	ctx, cancel := context.WithTimeout(ctx, sweepTimeout)
	defer cancel()
	swept, err := sweeper.SweepAbandonedUploads(ctx, now.Add(-abandonedUploadAge))
	if err != nil {
		s.log.Error(err, "Sweeping abandoned uploads failed; the next sweep tries again", "deletedUploads", swept.Deleted,
			"nextSweepIn", uploadSweepInterval)
		return
	}
	s.log.V(1).Info("Swept abandoned uploads", "deletedUploads", swept.Deleted, "olderThan", abandonedUploadAge)
}
