package snapshotter

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
)

func TestGarbageSelection(t *testing.T) {
	now := time.Date(2030, 6, 15, 12, 30, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return now.Add(-d) }
	full := func(rev int64, age time.Duration) *snapshot.Snapshot {
		return snapshot.NewFull(rev, at(age), snapshot.CompressionGzip, false)
	}
	incr := func(from, to int64, age time.Duration) *snapshot.Snapshot {
		return snapshot.NewIncr(from, to, at(age), snapshot.CompressionGzip)
	}
	v1 := &snapshot.Snapshot{Kind: snapshot.KindFull, LastRevision: 1, CreatedOn: at(1000 * time.Hour), SnapDir: "Backup-1", SnapName: "Full-00000000-00000001-1"}
	h := time.Hour
	tests := []struct {
		name   string
		cfg    Config
		snaps  []*snapshot.Snapshot
		delete []string
	}{
		{
			name: "exponential: current hour kept, hourly, daily and weekly newest kept, the rest deleted",
			cfg:  Config{GarbageCollectionPolicy: GCExponential},
			snaps: []*snapshot.Snapshot{
				v1,
				full(10, 40*24*h), // older than 4 weeks
				full(20, 18*24*h), // week bucket (Tue and Wed of one week): older in its week
				full(21, 17*24*h),
				full(30, 3*24*h+2*h), // day bucket: older in its day
				full(31, 3*24*h+h),
				full(40, 5*h+10*time.Minute), // hour bucket: older in its hour
				incr(41, 45, 5*h+5*time.Minute),
				full(46, 5*h),
				incr(47, 50, 2*h),
				full(60, 25*time.Minute), // current hour
				incr(61, 70, 20*time.Minute),
				full(71, 10*time.Minute), // latest
				incr(72, 80, 5*time.Minute),
			},
			delete: []string{"Full-10", "Full-20", "Full-30", "Full-40", "Incr-41", "Incr-47"},
		},
		{
			name:   "limit based keeps the newest N fulls and the deltas after the oldest kept",
			cfg:    Config{GarbageCollectionPolicy: GCLimitBased, MaxBackups: 2},
			snaps:  []*snapshot.Snapshot{v1, full(10, 9*h), incr(11, 20, 8*h), full(20, 7*h), incr(21, 30, 6*h), full(30, 5*h), incr(31, 40, 4*h)},
			delete: []string{"Full-10", "Incr-11"},
		},
		{
			name:   "limit 1 keeps only the latest stream",
			cfg:    Config{GarbageCollectionPolicy: GCLimitBased, MaxBackups: 1},
			snaps:  []*snapshot.Snapshot{full(10, 9*h), incr(11, 20, 8*h), full(20, 7*h), incr(21, 30, 6*h)},
			delete: []string{"Full-10", "Incr-11"},
		},
		{
			name:   "the latest stream survives even when older than every window",
			cfg:    Config{GarbageCollectionPolicy: GCExponential},
			snaps:  []*snapshot.Snapshot{full(10, 60*24*h), incr(11, 20, 59*24*h), full(20, 50*24*h), incr(21, 30, 49*24*h)},
			delete: []string{"Full-10", "Incr-11"},
		},
		{
			name:   "the delta retention period keeps younger deltas the policy would delete",
			cfg:    Config{GarbageCollectionPolicy: GCLimitBased, MaxBackups: 1, DeltaSnapshotRetentionPeriod: 7 * h},
			snaps:  []*snapshot.Snapshot{full(10, 9*h), incr(11, 20, 8*h), incr(21, 25, 6*h), full(25, 5*h), incr(26, 30, 4*h)},
			delete: []string{"Full-10", "Incr-11"},
		},
		{
			name:  "deltas only: nothing to collect",
			cfg:   Config{GarbageCollectionPolicy: GCLimitBased, MaxBackups: 1},
			snaps: []*snapshot.Snapshot{incr(1, 10, 9*h), incr(11, 20, 8*h)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, s := range Garbage(tt.cfg, tt.snaps, now) {
				got = append(got, shortName(s))
			}
			slices.Sort(got)
			want := slices.Clone(tt.delete)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("deleted %v, want %v", got, want)
			}
		})
	}
}

// shortName is "Full-<last>" or "Incr-<start>".
func shortName(s *snapshot.Snapshot) string {
	if s.Kind == snapshot.KindFull {
		return "Full-" + strconv.FormatInt(s.LastRevision, 10)
	}
	return "Incr-" + strconv.FormatInt(s.StartRevision, 10)
}
