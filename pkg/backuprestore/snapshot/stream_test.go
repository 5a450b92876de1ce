package snapshot

import (
	"errors"
	"slices"
	"testing"
	"time"
)

func full(last int64, unix int64) *Snapshot {
	return NewFull(last, time.Unix(unix, 0), CompressionGzip, false)
}

func incr(start, last int64, unix int64) *Snapshot {
	return NewIncr(start, last, time.Unix(unix, 0), CompressionGzip)
}

func names(snaps []*Snapshot) []string {
	out := make([]string, 0, len(snaps))
	for _, s := range snaps {
		out = append(out, s.SnapName)
	}
	return out
}

func TestLatestStream(t *testing.T) {
	f10, f50, f50final := full(10, 100), full(50, 500), NewFull(50, time.Unix(600, 0), CompressionNone, true)
	tests := []struct {
		name        string
		snaps       []*Snapshot
		wantFull    *Snapshot
		wantDeltas  []*Snapshot
		wantDropped []*Snapshot
		wantLast    int64
	}{
		{name: "empty store", wantLast: 0},
		{name: "full only", snaps: []*Snapshot{f10}, wantFull: f10, wantLast: 10},
		{
			name:       "newest full and contiguous deltas, older ones ignored",
			snaps:      []*Snapshot{f10, incr(11, 20, 200), incr(21, 50, 300), f50, incr(51, 60, 600), incr(61, 70, 700)},
			wantFull:   f50,
			wantDeltas: []*Snapshot{incr(51, 60, 600), incr(61, 70, 700)},
			wantLast:   70,
		},
		{
			name:     "final full snapshot at the same revision wins",
			snaps:    []*Snapshot{f50, f50final},
			wantFull: f50final,
			wantLast: 50,
		},
		{
			name:       "unsorted input",
			snaps:      []*Snapshot{incr(61, 70, 700), f50, incr(51, 60, 600)},
			wantFull:   f50,
			wantDeltas: []*Snapshot{incr(51, 60, 600), incr(61, 70, 700)},
			wantLast:   70,
		},
		{
			name:       "full snapshot revision inside the first delta (non-atomic revision of the old sidecar)",
			snaps:      []*Snapshot{f50, incr(45, 60, 600)},
			wantFull:   f50,
			wantDeltas: []*Snapshot{incr(45, 60, 600)},
			wantLast:   60,
		},
		{
			name:        "duplicate deltas from a leader change",
			snaps:       []*Snapshot{f50, incr(51, 60, 600), incr(51, 60, 601), incr(61, 70, 700)},
			wantFull:    f50,
			wantDeltas:  []*Snapshot{incr(51, 60, 600), incr(61, 70, 700)},
			wantDropped: []*Snapshot{incr(51, 60, 601)},
			wantLast:    70,
		},
		{
			name:        "old leader's longer delta covers the new leader's shorter one",
			snaps:       []*Snapshot{f50, incr(51, 55, 610), incr(51, 80, 600), incr(56, 70, 620), incr(81, 90, 700)},
			wantFull:    f50,
			wantDeltas:  []*Snapshot{incr(51, 80, 600), incr(81, 90, 700)},
			wantDropped: []*Snapshot{incr(51, 55, 610), incr(56, 70, 620)},
			wantLast:    90,
		},
		{
			name:       "partially overlapping deltas are kept",
			snaps:      []*Snapshot{f50, incr(51, 60, 600), incr(58, 70, 610)},
			wantFull:   f50,
			wantDeltas: []*Snapshot{incr(51, 60, 600), incr(58, 70, 610)},
			wantLast:   70,
		},
		{
			name:       "no full snapshot, deltas from revision 1",
			snaps:      []*Snapshot{incr(1, 5, 100), incr(6, 9, 200)},
			wantDeltas: []*Snapshot{incr(1, 5, 100), incr(6, 9, 200)},
			wantLast:   9,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := LatestStream(tt.snaps)
			if err != nil {
				t.Fatalf("LatestStream: %v", err)
			}
			if (got.Full == nil) != (tt.wantFull == nil) || (got.Full != nil && got.Full.SnapName != tt.wantFull.SnapName) {
				t.Fatalf("full = %v, want %v", got.Full, tt.wantFull)
			}
			if !slices.Equal(names(got.Deltas), names(tt.wantDeltas)) {
				t.Fatalf("deltas = %v, want %v", names(got.Deltas), names(tt.wantDeltas))
			}
			if !slices.Equal(names(got.Dropped), names(tt.wantDropped)) {
				t.Fatalf("dropped = %v, want %v", names(got.Dropped), names(tt.wantDropped))
			}
			if got.LastRevision() != tt.wantLast {
				t.Fatalf("LastRevision = %d, want %d", got.LastRevision(), tt.wantLast)
			}
			if got.IsEmpty() != (tt.wantFull == nil && len(tt.wantDeltas) == 0) {
				t.Fatalf("IsEmpty = %v", got.IsEmpty())
			}
		})
	}
}

func TestLatestStreamReportsGaps(t *testing.T) {
	tests := []struct {
		name  string
		snaps []*Snapshot
	}{
		{"gap after the full snapshot", []*Snapshot{full(50, 500), incr(52, 60, 600)}},
		{"gap between deltas", []*Snapshot{full(50, 500), incr(51, 60, 600), incr(62, 70, 700)}},
		{"no full snapshot and deltas not from revision 1", []*Snapshot{incr(5, 9, 100)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LatestStream(tt.snaps)
			if !errors.Is(err, ErrRevisionGap) {
				t.Fatalf("err = %v, want ErrRevisionGap", err)
			}
		})
	}
}

func TestSortByLastRevision(t *testing.T) {
	snaps := []*Snapshot{incr(61, 70, 700), incr(41, 50, 450), full(50, 500), full(10, 100), incr(11, 20, 200)}
	SortByLastRevision(snaps)
	want := []string{
		"Full-00000000-00000010-100.gz",
		"Incr-00000011-00000020-200.gz",
		"Full-00000000-00000050-500.gz",
		"Incr-00000041-00000050-450.gz",
		"Incr-00000061-00000070-700.gz",
	}
	if !slices.Equal(names(snaps), want) {
		t.Fatalf("order = %v, want %v", names(snaps), want)
	}
}
