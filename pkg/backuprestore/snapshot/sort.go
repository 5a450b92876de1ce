package snapshot

import (
	"cmp"
	"slices"
)

// SortByLastRevision orders snapshots the way the store lists them: by last revision, then start
// revision (so a full snapshot precedes a delta ending at the same revision), then creation time and
// name, which makes the order total and therefore deterministic across stores.
func SortByLastRevision(snaps []*Snapshot) {
	slices.SortStableFunc(snaps, compareByLastRevision)
}

func compareByLastRevision(a, b *Snapshot) int {
	return cmp.Or(
		cmp.Compare(a.LastRevision, b.LastRevision),
		cmp.Compare(a.StartRevision, b.StartRevision),
		a.CreatedOn.Compare(b.CreatedOn),
		cmp.Compare(a.RelativeKey(), b.RelativeKey()),
	)
}
