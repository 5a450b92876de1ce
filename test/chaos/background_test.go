package chaos

import (
	"testing"
	"time"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// A rotation comes after every RotateEvery-th round, and after the last round of a run shorter than that,
// so that every run with rotations has one.
func TestRotateAfter(t *testing.T) {
	bg := Background{RotateEvery: 10}
	var got []int
	rotated := 0
	for n := 1; n <= 30; n++ {
		if bg.rotateAfter(n, 30, rotated) {
			got = append(got, n)
			rotated++
		}
	}
	if len(got) != 3 || got[0] != 10 || got[1] != 20 || got[2] != 30 {
		t.Errorf("30 rounds, every 10: rotations after %v, want [10 20 30]", got)
	}
	if !bg.rotateAfter(3, 3, 0) {
		t.Error("3 rounds, every 10: no rotation after the last round")
	}
	if bg.rotateAfter(3, 3, 1) {
		t.Error("a rotation after the last round although the run had one")
	}
	if (Background{}).rotateAfter(10, 10, 0) {
		t.Error("rotation without RotateEvery")
	}
}

// Background work overlapping a fault's span — also one still open — counts as during a fault; work
// entirely between spans does not.
func TestDisturbancesOverlap(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	var d disturbances
	d.begin(at(10))
	d.end(at(20))
	for _, tc := range []struct {
		from, to int
		want     bool
	}{{0, 5, false}, {0, 10, true}, {12, 15, true}, {15, 30, true}, {20, 25, true}, {21, 29, false}} {
		if got := d.overlaps(at(tc.from), at(tc.to)); got != tc.want {
			t.Errorf("[%d, %d] overlaps [10, 20]: %v, want %v", tc.from, tc.to, got, tc.want)
		}
	}
	d.begin(at(30))
	if !d.overlaps(at(25), at(35)) || !d.overlaps(at(40), at(50)) {
		t.Error("an open span overlaps nothing after its beginning")
	}
	if d.overlaps(at(21), at(29)) {
		t.Error("[21, 29] overlaps a span")
	}
}

func TestSummaries(t *testing.T) {
	tasks := []OpsTask{{State: druidv1alpha1.TaskStateSucceeded}, {State: druidv1alpha1.TaskStateFailed, DuringFault: true},
		{State: druidv1alpha1.TaskStateSucceeded}, {}}
	if got, want := opsTaskSummary(tasks), "2 ok, 1 Failed, 1 hung"; got != want {
		t.Errorf("ops tasks: %q, want %q", got, want)
	}
	if got := opsTaskSummary(nil); got != "—" {
		t.Errorf("no ops tasks: %q", got)
	}
	jobs := []CompactionJob{{Outcome: jobSucceeded}, {Outcome: jobFailed}, {Outcome: jobSucceeded}}
	if got, want := compactionSummary(jobs), "2 ok, 1 failed"; got != want {
		t.Errorf("compactions: %q, want %q", got, want)
	}
}

// A compaction Job that failed while no fault was around it fails the round; during a fault it is only
// reported.
func TestCompactionCollect(t *testing.T) {
	w := &compactionWatch{windows: &disturbances{}}
	w.finished = []CompactionJob{{UID: "during", Outcome: jobFailed, DuringFault: true}, {UID: "ok", Outcome: jobSucceeded}}
	if jobs, err := w.collect(); err != nil || len(jobs) != 2 {
		t.Errorf("a failure during a fault: %d jobs, %v", len(jobs), err)
	}
	w.finished = []CompactionJob{{UID: "settled", Outcome: jobFailed, Reason: "BackoffLimitExceeded"}}
	if _, err := w.collect(); err == nil {
		t.Error("a failure without a fault around it passed")
	}
	if jobs, err := w.collect(); len(jobs) != 0 || err != nil {
		t.Errorf("collected twice: %v %v", jobs, err)
	}
}
