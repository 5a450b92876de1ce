package snapshotter

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
)

// Retention windows of the Exponential policy, counted back from the start of the current hour.
const (
	hourlyWindow = 24 * time.Hour
	dailyWindow  = 7 * 24 * time.Hour
	weeklyWindow = 4 * 7 * 24 * time.Hour
	week         = 7 * 24 * time.Hour
)

// Garbage selects the snapshots cfg's policy deletes from snaps at now. Whatever the policy, the latest
// snap stream (the newest full snapshot and everything after it) is kept, and legacy v1 snapshots are
// left alone (their layout is read-only). Deltas are worth keeping only together with the full snapshot
// they continue:
//   - Exponential keeps every snapshot created in the current hour; of older full snapshots the newest
//     per hour for 24 hours, per day for 7 days and per week for 4 weeks; older deltas are deleted
//     (point-in-time restore is offered within the current hour and the latest stream only).
//   - LimitBased keeps the newest MaxBackups full snapshots and the deltas after the oldest kept one.
//
// Either policy also keeps the deltas created within cfg.DeltaSnapshotRetentionPeriod.
func Garbage(cfg Config, snaps []*snapshot.Snapshot, now time.Time) []*snapshot.Snapshot {
	var fulls []*snapshot.Snapshot
	for _, s := range snaps {
		if s.Kind == snapshot.KindFull && s.Layout() == snapshot.LayoutV2 {
			fulls = append(fulls, s)
		}
	}
	if len(fulls) == 0 {
		return nil // only deltas from revision 1: all of them are the latest stream
	}
	snapshot.SortByLastRevision(fulls)
	latest := fulls[len(fulls)-1]
	var keepFull func(*snapshot.Snapshot) bool
	var keepDelta func(*snapshot.Snapshot) bool
	switch cfg.GarbageCollectionPolicy {
	case GCLimitBased:
		kept := fulls[max(0, len(fulls)-max(1, cfg.MaxBackups)):]
		oldest := kept[0]
		keepFull = func(s *snapshot.Snapshot) bool { return slices.Contains(kept, s) }
		keepDelta = func(s *snapshot.Snapshot) bool { return s.LastRevision > oldest.LastRevision }
	default:
		hour := now.UTC().Truncate(time.Hour)
		kept := exponentialFulls(fulls, hour)
		keepFull = func(s *snapshot.Snapshot) bool { return kept[s] }
		keepDelta = func(s *snapshot.Snapshot) bool { return !s.CreatedOn.Before(hour) }
	}
	retained := func(s *snapshot.Snapshot) bool {
		return cfg.DeltaSnapshotRetentionPeriod > 0 && !s.CreatedOn.Before(now.Add(-cfg.DeltaSnapshotRetentionPeriod))
	}
	var out []*snapshot.Snapshot
	for _, s := range snaps {
		switch {
		case s.Layout() != snapshot.LayoutV2, s == latest, s.LastRevision > latest.LastRevision:
		case s.Kind == snapshot.KindFull && !keepFull(s):
			out = append(out, s)
		case s.Kind == snapshot.KindIncr && !keepDelta(s) && !retained(s):
			out = append(out, s)
		}
	}
	return out
}

// exponentialFulls picks the full snapshots the Exponential policy keeps.
func exponentialFulls(fulls []*snapshot.Snapshot, hour time.Time) map[*snapshot.Snapshot]bool {
	newestPerBucket := map[int64]*snapshot.Snapshot{}
	kept := map[*snapshot.Snapshot]bool{}
	for _, s := range fulls {
		created := s.CreatedOn.UTC()
		var bucket int64
		switch age := hour.Sub(created); {
		case !created.Before(hour):
			kept[s] = true
			continue
		case age <= hourlyWindow:
			bucket = created.Truncate(time.Hour).Unix()
		case age <= dailyWindow:
			bucket = created.Truncate(24*time.Hour).Unix() + 1 // +1: never equal to an hour bucket
		case age <= weeklyWindow:
			bucket = created.Truncate(week).Unix() + 2
		default:
			continue
		}
		if cur, ok := newestPerBucket[bucket]; !ok || s.CreatedOn.After(cur.CreatedOn) ||
			(s.CreatedOn.Equal(cur.CreatedOn) && s.LastRevision > cur.LastRevision) {
			newestPerBucket[bucket] = s
		}
	}
	for _, s := range newestPerBucket {
		kept[s] = true
	}
	return kept
}

// CollectGarbage deletes what Garbage selects from the store now (it also runs every
// GarbageCollectionPeriod), and what interrupted uploads left behind (sweepAbandonedUploads). A snapshot
// the store keeps under its retention (snapstore.ErrLocked: immutable backups) is left for a later run:
// it neither fails the run nor counts as deleted, and the selection does not change for it, so no other
// snapshot goes in its place. Until its retention ends it is not tried again (see gcLocks).
func (s *Snapshotter) CollectGarbage(ctx context.Context) error {
	s.gcMu.Lock()
	defer s.gcMu.Unlock()
	start := time.Now()
	snaps, err := s.store.List(ctx)
	if err != nil {
		s.metrics.failed("GC", time.Since(start))
		return err
	}
	now := s.now()
	garbage := Garbage(s.cfg, snaps, now)
	s.gcLocks.forget(garbage)
	var errs []error
	locked := map[snapshot.Kind]int{}
	var oldestLocked string
	for _, snap := range garbage {
		err := s.gcLocks.skip(snap, now)
		if err == nil {
			err = s.store.Delete(ctx, snap)
		}
		switch {
		case errors.Is(err, snapstore.ErrLocked):
			s.gcLocks.remember(snap, err)
			locked[snap.Kind]++
			if oldestLocked == "" {
				oldestLocked = snap.SnapName
			}
			s.log.V(1).Info("Leaving snapshot locked by the store's retention", "snapshot", snap.SnapName, "reason", err.Error())
		case err != nil:
			s.metrics.collected(snap, false)
			errs = append(errs, err)
		default:
			s.metrics.collected(snap, true)
			s.log.V(1).Info("Garbage-collected snapshot", "snapshot", snap.SnapName, "revision", snap.LastRevision)
		}
	}
	s.sweepAbandonedUploads(ctx, now)
	s.metrics.lockedInGC(locked)
	if n := locked[snapshot.KindFull] + locked[snapshot.KindIncr]; n > 0 {
		s.log.Info("Garbage collection left snapshots that the store's retention still locks; a later run deletes them",
			"full", locked[snapshot.KindFull], "delta", locked[snapshot.KindIncr], "oldest", oldestLocked)
	}
	if err := errors.Join(errs...); err != nil {
		s.metrics.failed("GC", time.Since(start))
		return err
	}
	return nil
}

// gcLocks remembers until when the store locks snapshots that garbage collection could not delete, so
// that each run (every GarbageCollectionPeriod, a minute by default) does not ask the store again about
// every locked snapshot: under a retention of days those are thousands of deltas. A lock whose end the
// store did not tell (a legal hold) is asked about at every run.
type gcLocks map[string]time.Time

// skip returns the remembered lock of snap while it lasts, nil otherwise.
func (l gcLocks) skip(snap *snapshot.Snapshot, now time.Time) error {
	if until, ok := l[snap.SnapName]; ok && now.Before(until) {
		return &snapstore.LockedError{Until: until, Lock: "retention (remembered)"}
	}
	return nil
}

// remember records the end of snap's lock, when the store told it.
func (l gcLocks) remember(snap *snapshot.Snapshot, err error) {
	var locked *snapstore.LockedError
	if errors.As(err, &locked) && !locked.Until.IsZero() {
		l[snap.SnapName] = locked.Until
	}
}

// forget drops the snapshots that are no longer garbage (deleted by someone else, or kept again).
func (l gcLocks) forget(garbage []*snapshot.Snapshot) {
	names := make(map[string]bool, len(garbage))
	for _, s := range garbage {
		names[s.SnapName] = true
	}
	for name := range l {
		if !names[name] {
			delete(l, name)
		}
	}
}
