package copier

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
)

// waitForFinal lists the source until its latest full snapshot is final. Listing errors are retried
// (the source may be briefly unreachable); the last one is reported on timeout.
func waitForFinal(ctx context.Context, opts Options, log logr.Logger) error {
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
			full := latestFull(snaps)
			if full != nil && full.IsFinal {
				log.Info("Source has a final full snapshot", "snapshot", full.SnapName)
				return nil
			}
			if full != nil {
				latest = full.SnapName
			}
		}
		log.Info("Waiting for a final full snapshot in the source store", "latest", latest)
		select {
		case <-ctx.Done():
			if opts.WaitForFinalSnapshotTimeout > 0 && ctx.Err() == context.DeadlineExceeded {
				return fmt.Errorf("%w after %s (latest full snapshot: %s, last listing error: %v)",
					ErrFinalSnapshotTimeout, opts.WaitForFinalSnapshotTimeout, latest, lastErr)
			}
			return ctx.Err()
		case <-t.C:
		}
	}
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
