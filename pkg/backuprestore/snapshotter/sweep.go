package snapshotter

import (
	"context"
	"time"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
)

const (
	// abandonedUploadAge is how long nothing may have been written to an upload before a sweep deletes
	// it (snapstore.UploadSweeper): far longer than any upload takes, and than a store takes to
	// complete a write whose client has left.
	abandonedUploadAge = 24 * time.Hour
	// uploadSweepInterval is how often garbage collection sweeps. A sweep lists every upload and reads
	// the manifest of each older large snapshot: too many requests for every run (a minute by default),
	// and abandoned uploads are rare.
	uploadSweepInterval = 12 * time.Hour
)

// sweepAbandonedUploads has the store delete what interrupted uploads left behind, when it is a store
// that can leave some and the last sweep was uploadSweepInterval ago or this process has not swept yet.
// A failed sweep is logged and tried again at the next interval; it does not fail garbage collection.
// The caller holds gcMu.
func (s *Snapshotter) sweepAbandonedUploads(ctx context.Context, now time.Time) {
	sweeper, ok := s.store.(snapstore.UploadSweeper)
	if !ok || (!s.lastSweep.IsZero() && now.Sub(s.lastSweep) < uploadSweepInterval) {
		return
	}
	s.lastSweep = now
	swept, err := sweeper.SweepAbandonedUploads(ctx, now.Add(-abandonedUploadAge))
	if err != nil {
		s.log.Error(err, "Sweeping abandoned uploads left some undecided; they are kept until a later sweep decides", "nextSweepIn", uploadSweepInterval)
	}
	log := s.log.V(1)
	if swept.Deleted > 0 {
		log = s.log
	}
	log.Info("Swept abandoned uploads", "deletedUploads", swept.Deleted, "deletedObjects", swept.Objects,
		"unusedFor", abandonedUploadAge, "uploadsOfEarlierVersionsLeftAlone", swept.Unkeyed)
}
