package copier

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
)

// waitForFinal lists the source until it holds a final full snapshot that nothing was backed up after, and
// returns that snapshot. A full snapshot taken after it at the same revision (the schedule fired between the
// final snapshot and the shutdown) holds nothing more and does not stand in the way. A final snapshot followed by later revisions was taken while the cluster still
// took writes (a stray or early `/snapshot/full?final=true`): it does not release the copy, which waits for
// a final snapshot of the cluster shut down on purpose. Listing errors are retried (the source may be
// briefly unreachable); the last one is reported on timeout.
func waitForFinal(ctx context.Context, opts Options, log logr.Logger) (*snapshot.Snapshot, error) {
	if opts.WaitForFinalSnapshotTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.WaitForFinalSnapshotTimeout)
		defer cancel()
	}
	t := time.NewTicker(opts.PollInterval)
	defer t.Stop()
	latest, lastErr := "none", error(nil)
	for {
		snaps, err := opts.Source.List(ctx)
		switch {
		case err != nil:
			lastErr = err
		default:
			if full := latestFull(snaps); full != nil {
				latest = full.SnapName
			}
			if final := latestFinal(snaps); final != nil {
				after := backedUpAfter(snaps, final)
				if after == nil {
					log.Info("Source has a final full snapshot", "snapshot", final.SnapName)
					return final, nil
				}
				log.Info("Ignoring a final full snapshot: the source was written to after it", "snapshot", final.SnapName, "later", after.SnapName)
			}
		}
		log.Info("Waiting for a final full snapshot in the source store", "latest", latest)
		select {
		case <-ctx.Done():
			if opts.WaitForFinalSnapshotTimeout > 0 && ctx.Err() == context.DeadlineExceeded {
				return nil, fmt.Errorf("%w after %s (latest full snapshot: %s, last listing error: %v)",
					ErrFinalSnapshotTimeout, opts.WaitForFinalSnapshotTimeout, latest, lastErr)
			}
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// backedUpAfter returns a snapshot of the listing that holds revisions after final's, or nil.
func backedUpAfter(snaps []*snapshot.Snapshot, final *snapshot.Snapshot) *snapshot.Snapshot {
	for _, s := range snaps {
		if s.LastRevision > final.LastRevision {
			return s
		}
	}
	return nil
}

// checkStillFinal lists the source once more after the copy: a snapshot with revisions after final means the
// source took writes after its "final" snapshot, so the copy misses them and must not count as complete.
func checkStillFinal(ctx context.Context, opts Options, final *snapshot.Snapshot) error {
	snaps, err := opts.Source.List(ctx)
	if err != nil {
		return fmt.Errorf("listing the source store after the copy: %w", err)
	}
	if after := backedUpAfter(snaps, final); after != nil {
		return fmt.Errorf("%w: %s holds revisions up to %d, after the final snapshot %s (revision %d)",
			ErrWrittenAfterFinal, after.SnapName, after.LastRevision, final.SnapName, final.LastRevision)
	}
	return nil
}

// latestFinal is the final full snapshot with the newest revision, or nil.
func latestFinal(snaps []*snapshot.Snapshot) *snapshot.Snapshot {
	var finals []*snapshot.Snapshot
	for _, s := range snaps {
		if s.Kind == snapshot.KindFull && s.IsFinal {
			finals = append(finals, s)
		}
	}
	return latestFull(finals)
}

// latestFull is the full snapshot a restore of the listing would start from.
func latestFull(snaps []*snapshot.Snapshot) *snapshot.Snapshot {
	var latest *snapshot.Snapshot
	for _, s := range snaps {
		if s.Kind != snapshot.KindFull {
			continue
		}
		if latest == nil || s.LastRevision > latest.LastRevision ||
			(s.LastRevision == latest.LastRevision && !s.CreatedOn.Before(latest.CreatedOn)) {
			latest = s
		}
	}
	return latest
}
