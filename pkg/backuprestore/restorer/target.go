package restorer

import (
	"context"
	"fmt"
	"time"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
)

// plan is what a restore replays and the revision it must end at. It is computed from the store's
// listing alone, before anything is fetched or written, so that a target the store cannot restore is
// refused without side effects.
type plan struct {
	stream snapshot.Stream
	// target is the revision the restored data ends at: the stream's last revision, or a target
	// revision inside its last delta (whose later events are read for the checksum, not applied).
	target int64
}

// plan lists the store and picks the stream to restore: the latest one, or the one that ends at the
// target revision (given, or resolved from the target time).
func (r *restore) plan(ctx context.Context) (plan, error) {
	snaps, err := r.opts.Store.List(ctx)
	if err != nil {
		return plan{}, fmt.Errorf("listing the store: %w", err)
	}
	if len(snaps) == 0 {
		return plan{}, ErrNoSnapshots
	}
	target := r.opts.TargetRevision
	if !r.opts.TargetTime.IsZero() {
		if target, err = revisionAtTime(snaps, r.opts.TargetTime); err != nil {
			return plan{}, err
		}
		r.log.Info("Resolved the target time to a revision", "time", r.opts.TargetTime.UTC().Format(time.RFC3339), "revision", target)
	}
	var stream snapshot.Stream
	if target == 0 {
		stream, err = snapshot.LatestStream(snaps)
		target = stream.LastRevision()
	} else {
		stream, err = streamAt(snaps, target)
	}
	if err != nil {
		return plan{}, err
	}
	if stream.IsEmpty() {
		return plan{}, ErrNoSnapshots
	}
	for _, d := range stream.Dropped {
		r.log.Info("Ignoring delta covered by another delta", "snapshot", d.SnapName, "revision", d.LastRevision)
	}
	return plan{stream: stream, target: target}, nil
}

// revisionAtTime resolves a target time to the revision to restore. The store records one time per
// snapshot, in its name, to the second: when the snapshotter cut a delta (after it had received every
// event in it) or began a full snapshot (whose content is etcd's state a moment later). The revision at
// time at is therefore the highest last revision of a snapshot created at or before it: what the backups
// had recorded by then. Writes after that snapshot are not restored even if they happened before at:
// they are in the next delta, whose events carry only the time the snapshotter received them, not when
// etcd committed them. A revision is the exact form of a target.
func revisionAtTime(snaps []*snapshot.Snapshot, at time.Time) (int64, error) {
	var rev int64
	oldest := snaps[0]
	for _, s := range snaps {
		if !s.CreatedOn.After(at) {
			rev = max(rev, s.LastRevision)
		}
		if s.CreatedOn.Before(oldest.CreatedOn) {
			oldest = s
		}
	}
	if rev == 0 {
		return 0, fmt.Errorf("%w: time %s is before the oldest snapshot kept, %s taken at %s", ErrTargetNotInStore,
			at.UTC().Format(time.RFC3339), oldest, oldest.CreatedOn.UTC().Format(time.RFC3339))
	}
	return rev, nil
}

// streamAt is the stream that restores exactly revision rev: the newest full snapshot at or below rev
// (a full snapshot's revision is the newest its database holds) and the contiguous deltas from there to
// the first one that reaches rev. It refuses a revision older than the oldest full snapshot kept (unless
// deltas from revision 1 cover it), newer than the newest stored revision, or in a gap of the deltas.
func streamAt(snaps []*snapshot.Snapshot, rev int64) (snapshot.Stream, error) {
	var newest, oldestFull *snapshot.Snapshot
	var upTo []*snapshot.Snapshot // the snapshots that can contribute to the state at rev
	fromGenesis := false
	for _, s := range snaps {
		if newest == nil || s.LastRevision > newest.LastRevision {
			newest = s
		}
		if s.Kind == snapshot.KindFull && (oldestFull == nil || s.LastRevision < oldestFull.LastRevision) {
			oldestFull = s
		}
		if (s.Kind == snapshot.KindFull && s.LastRevision <= rev) || (s.Kind == snapshot.KindIncr && s.StartRevision <= rev) {
			upTo = append(upTo, s)
			fromGenesis = fromGenesis || s.Kind == snapshot.KindFull || s.StartRevision == 1
		}
	}
	switch {
	case rev > newest.LastRevision:
		return snapshot.Stream{}, fmt.Errorf("%w: revision %d is newer than the newest stored revision %d (%s)",
			ErrTargetNotInStore, rev, newest.LastRevision, newest)
	case !fromGenesis && oldestFull != nil:
		return snapshot.Stream{}, fmt.Errorf("%w: revision %d is older than the oldest full snapshot kept, %s at revision %d",
			ErrTargetNotInStore, rev, oldestFull, oldestFull.LastRevision)
	case !fromGenesis:
		return snapshot.Stream{}, fmt.Errorf("%w: revision %d: the store holds no full snapshot and no delta from revision 1",
			ErrTargetNotInStore, rev)
	}
	stream, err := snapshot.LatestStream(upTo)
	if err != nil {
		return snapshot.Stream{}, fmt.Errorf("revision %d: %w", rev, err)
	}
	if last := stream.LastRevision(); last < rev {
		next := nextAfter(snaps, last)
		return snapshot.Stream{}, fmt.Errorf("%w: revision %d: revisions %d to %d are in no delta snapshot (the next snapshot is %s)",
			snapshot.ErrRevisionGap, rev, last+1, firstRevision(next)-1, next)
	}
	for i, d := range stream.Deltas { // later deltas would hold nothing at or below rev
		if d.LastRevision >= rev {
			stream.Deltas = stream.Deltas[:i+1]
			break
		}
	}
	return stream, nil
}

// firstRevision is the lowest revision a snapshot restores to on its own: a delta's first, a full
// snapshot's only one.
func firstRevision(s *snapshot.Snapshot) int64 {
	if s.Kind == snapshot.KindFull {
		return s.LastRevision
	}
	return s.StartRevision
}

// nextAfter is the snapshot with the lowest first revision above rev; streamAt calls it only when a
// stored revision above rev exists.
func nextAfter(snaps []*snapshot.Snapshot, rev int64) *snapshot.Snapshot {
	var next *snapshot.Snapshot
	for _, s := range snaps {
		if firstRevision(s) > rev && (next == nil || firstRevision(s) < firstRevision(next)) {
			next = s
		}
	}
	return next
}
