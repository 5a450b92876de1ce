package snapshot

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
)

// ErrRevisionGap is returned when the deltas after the latest full snapshot do not cover every
// revision: restoring them would silently lose writes, so a restore must not proceed.
var ErrRevisionGap = errors.New("revision gap in delta snapshots")

// Stream is what a restore replays: the newest full snapshot and the deltas that continue it.
// Deltas may overlap their predecessor (an old and a new backup leader both uploaded the revisions
// around a leader change, or a full snapshot's revision lies inside the first delta); a consumer
// applies only the events whose revision is above what it has applied so far.
type Stream struct {
	// Full is the base; nil when the store holds only deltas starting at revision 1.
	Full *Snapshot
	// Deltas continue Full without gaps, ordered by start revision.
	Deltas []*Snapshot
	// Dropped are deltas reaching past Full whose revisions are all covered by an earlier delta;
	// reported so callers can log them (and garbage collection may delete them).
	Dropped []*Snapshot
}

// IsEmpty tells whether there is nothing to restore.
func (s Stream) IsEmpty() bool {
	return s.Full == nil && len(s.Deltas) == 0
}

// LastRevision is the revision a restore of the stream ends at.
func (s Stream) LastRevision() int64 {
	if n := len(s.Deltas); n > 0 {
		return s.Deltas[n-1].LastRevision
	}
	if s.Full != nil {
		return s.Full.LastRevision
	}
	return 0
}

// LatestStream computes the snap stream from a listing: the full snapshot with the highest revision
// (the newest by creation time among equals) and every delta reaching past it, checked for
// contiguity. Deltas fully covered by the full snapshot or an earlier delta are dropped; a revision
// that no snapshot covers is an ErrRevisionGap.
func LatestStream(snaps []*Snapshot) (Stream, error) {
	stream := Stream{Full: LatestFull(snaps)}
	var after int64 // the last revision already covered
	if stream.Full != nil {
		after = stream.Full.LastRevision
	}
	candidates := deltasReachingPast(snaps, after)
	for _, d := range candidates {
		switch {
		case d.LastRevision <= after:
			stream.Dropped = append(stream.Dropped, d)
		case d.StartRevision > after+1:
			return Stream{}, fmt.Errorf("%w: revisions %d to %d are in no snapshot (next delta is %s)",
				ErrRevisionGap, after+1, d.StartRevision-1, d)
		default:
			stream.Deltas = append(stream.Deltas, d)
			after = d.LastRevision
		}
	}
	return stream, nil
}

// LatestFull is the full snapshot a restore starts from: the one with the highest revision, the newest
// by creation time among equals; nil when snaps has none.
func LatestFull(snaps []*Snapshot) *Snapshot {
	var latest *Snapshot
	for _, s := range snaps {
		if s.Kind == KindFull && (latest == nil || isNewerFull(s, latest)) {
			latest = s
		}
	}
	return latest
}

// isNewerFull prefers the higher revision and, for the same revision, the later snapshot (a final
// snapshot taken after a regular one at the same revision wins).
func isNewerFull(a, b *Snapshot) bool {
	return compareByLastRevision(a, b) > 0
}

// deltasReachingPast returns the deltas with revisions above rev, ordered by start revision and, for
// equal starts, longest first so that a shorter duplicate is the one dropped.
func deltasReachingPast(snaps []*Snapshot, rev int64) []*Snapshot {
	var out []*Snapshot
	for _, s := range snaps {
		if s.Kind == KindIncr && s.LastRevision > rev {
			out = append(out, s)
		}
	}
	slices.SortStableFunc(out, func(a, b *Snapshot) int {
		return cmp.Or(
			cmp.Compare(a.StartRevision, b.StartRevision),
			cmp.Compare(b.LastRevision, a.LastRevision),
			a.CreatedOn.Compare(b.CreatedOn),
		)
	})
	return out
}
