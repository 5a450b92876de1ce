package copier

import (
	"testing"
	"time"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
)

// TestSelect checks which snapshots of a listing are copied for the --max-backups-to-copy and
// --max-backup-age combinations druid passes. The order is the store's listing order (by last revision, a
// full snapshot before a delta ending at the same revision), which is the order objects are copied in.
func TestSelect(t *testing.T) {
	now := time.Date(2025, 6, 10, 12, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	f1 := snapshot.NewFull(10, now.Add(-10*day), snapshot.CompressionGzip, false)
	d1 := snapshot.NewIncr(11, 20, now.Add(-10*day+time.Hour), snapshot.CompressionGzip)
	f2 := snapshot.NewFull(20, now.Add(-3*day), snapshot.CompressionGzip, false)
	d2 := snapshot.NewIncr(21, 30, now.Add(-3*day+time.Hour), snapshot.CompressionGzip)
	f3 := snapshot.NewFull(30, now.Add(-1*day), snapshot.CompressionNone, false)
	d3 := snapshot.NewIncr(31, 40, now.Add(-time.Hour), snapshot.CompressionNone)
	f4 := snapshot.NewFull(40, now, snapshot.CompressionNone, true)
	legacy, err := snapshot.ParseRelativeKey("v1/Backup-1000/Full-00000000-00000005-1000")
	if err != nil {
		t.Fatal(err)
	}
	listing := []*snapshot.Snapshot{legacy, f1, d1, f2, d2, f3, d3, f4}
	for _, tc := range []struct {
		name        string
		max, maxAge int
		want        []*snapshot.Snapshot
	}{
		{"everything", -1, -1, []*snapshot.Snapshot{legacy, f1, f2, d1, f3, d2, f4, d3}},
		{"newest two fulls and the deltas after the older", 2, -1, []*snapshot.Snapshot{f3, f4, d3}},
		{"younger than 5 days", -1, 5, []*snapshot.Snapshot{f2, f3, d2, f4, d3}},
		{"both limits, count binds", 1, 5, []*snapshot.Snapshot{f4}},
		{"both limits, age binds", 5, 2, []*snapshot.Snapshot{f3, f4, d3}},
		{"nothing young enough", -1, 0, []*snapshot.Snapshot{f4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Select(listing, tc.max, tc.maxAge, now)
			if len(got) != len(tc.want) {
				t.Fatalf("Select = %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("Select = %v, want %v", got, tc.want)
				}
			}
		})
	}
	if got := Select([]*snapshot.Snapshot{d1}, -1, -1, now); len(got) != 0 {
		t.Errorf("deltas without a full snapshot selected: %v", got)
	}
}
