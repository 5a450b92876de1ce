package copier

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
)

// DefaultPollInterval is how often the source is listed while waiting for the final snapshot.
const DefaultPollInterval = 10 * time.Second

// ErrFinalSnapshotTimeout reports that the source's latest full snapshot did not become final in time.
var ErrFinalSnapshotTimeout = errors.New("timed out waiting for a final full snapshot in the source store")

// ErrWrittenAfterFinal reports that the source was backed up beyond its final full snapshot while the copy
// ran: the source cluster was not shut down, and the copy misses its latest writes.
var ErrWrittenAfterFinal = errors.New("the source store was written to after its final full snapshot; the copy is incomplete")

// Options configure one copy.
type Options struct {
	Source, Target snapstore.SnapStore
	// MaxBackups is the number of newest full snapshots copied (--max-backups-to-copy); < 1 means all.
	MaxBackups int
	// MaxBackupAge excludes full snapshots older than this many days (--max-backup-age); < 0 means none
	// is too old.
	MaxBackupAge int
	// WaitForFinalSnapshot delays the copy until the source's latest full snapshot is final
	// (--wait-for-final-snapshot).
	WaitForFinalSnapshot bool
	// WaitForFinalSnapshotTimeout bounds the wait (--wait-for-final-snapshot-timeout); 0 means until ctx ends.
	WaitForFinalSnapshotTimeout time.Duration
	// PollInterval is how often the source is listed while waiting; 0 means DefaultPollInterval.
	PollInterval time.Duration
	Log          logr.Logger
	// Now is the clock the ages are measured with; nil means time.Now.
	Now func() time.Time
}

// Result describes a completed copy.
type Result struct {
	// Copied are the snapshots written to the target, Skipped those it held already.
	Copied, Skipped []*snapshot.Snapshot
}

// Copy copies the selected snapshots (see the package documentation) from Source to Target.
func Copy(ctx context.Context, opts Options) (Result, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	log := opts.Log.WithName("copier")
	var final *snapshot.Snapshot
	if opts.WaitForFinalSnapshot {
		var err error
		if final, err = waitForFinal(ctx, opts, log); err != nil {
			return Result{}, err
		}
	}
	snaps, err := opts.Source.List(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("listing the source store: %w", err)
	}
	selected := Select(snaps, opts.MaxBackups, opts.MaxBackupAge, opts.Now())
	present, err := targetNames(ctx, opts.Target)
	if err != nil {
		return Result{}, err
	}
	log.Info("Copying backups", "selected", len(selected), "inSource", len(snaps))
	var res Result
	for _, snap := range selected {
		dst := inTarget(snap)
		if present[dst.SnapName] || present[dst.SnapName+snapshot.FinalSuffix] {
			res.Skipped = append(res.Skipped, snap)
			continue
		}
		start := time.Now()
		size, err := copyVerified(ctx, opts.Source, opts.Target, snap, dst)
		if err != nil {
			return res, fmt.Errorf("copying %s: %w", snap, err)
		}
		res.Copied = append(res.Copied, snap)
		log.Info("Copied snapshot", "snapshot", dst.SnapName, "revision", snap.LastRevision, "bytes", size, "took", time.Since(start))
	}
	if final != nil {
		if err := checkStillFinal(ctx, opts, final); err != nil {
			return res, err
		}
	}
	log.Info("Copy complete", "copied", len(res.Copied), "skipped", len(res.Skipped))
	return res, nil
}

// Select picks, from a listing, the newest full snapshots (at most maxBackups unless < 1, none created more
// than maxAgeDays before now unless < 0) and every delta after the oldest picked one, in revision order.
func Select(snaps []*snapshot.Snapshot, maxBackups, maxAgeDays int, now time.Time) []*snapshot.Snapshot {
	var fulls []*snapshot.Snapshot
	for _, s := range snaps {
		if s.Kind == snapshot.KindFull && (maxAgeDays < 0 || !s.CreatedOn.Before(now.Add(-time.Duration(maxAgeDays)*24*time.Hour))) {
			fulls = append(fulls, s)
		}
	}
	snapshot.SortByLastRevision(fulls)
	slices.Reverse(fulls)
	if maxBackups >= 1 && len(fulls) > maxBackups {
		fulls = fulls[:maxBackups]
	}
	if len(fulls) == 0 {
		return nil
	}
	oldest := fulls[len(fulls)-1].LastRevision
	selected := fulls
	for _, s := range snaps {
		if s.Kind == snapshot.KindIncr && s.LastRevision > oldest {
			selected = append(selected, s)
		}
	}
	snapshot.SortByLastRevision(selected)
	return selected
}

// inTarget is the snapshot as the target stores it, named as upstream etcd-backup-restore's copy names
// it: never final (the mark says the source cluster shut down; the target is the store of a cluster that
// has not, and a final snapshot there would release a later copy out of it too early), and legacy v1
// snapshots in the v2 layout with their contents unchanged.
func inTarget(s *snapshot.Snapshot) *snapshot.Snapshot {
	c := *s
	c.SnapDir = ""
	if c.IsFinal {
		c.IsFinal = false
		c.SnapName = strings.TrimSuffix(c.SnapName, snapshot.FinalSuffix)
	}
	return &c
}

func targetNames(ctx context.Context, target snapstore.SnapStore) (map[string]bool, error) {
	snaps, err := target.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing the target store: %w", err)
	}
	names := make(map[string]bool, len(snaps))
	for _, s := range snaps {
		if s.Layout() == snapshot.LayoutV2 {
			names[s.SnapName] = true
		}
	}
	return names, nil
}
