package chaos

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

// Background is what a run does besides its faults, as an operator's cluster sees it at the same time:
// on-demand snapshot tasks, snapshot compaction Jobs and a rotation of the backup store's credentials.
// Each is judged by whether a fault was active around it: while none was, it must succeed; during a fault
// it may fail but must end (a task reaches a final state, a Job finishes or is recorded as gone).
type Background struct {
	// OpsTasks: every round runs an on-demand snapshot EtcdOpsTask once the cluster settled (it must
	// succeed) and more while the fault lasts (any final state, but one must be reached) — see opstasks.go.
	OpsTasks bool
	// CompactionEventsThreshold is written to etcd-main's spec.backup.snapshotCompaction.eventsThreshold so
	// that druid's compaction controller runs Jobs during the run (0: druid's default of 1,000,000 delta
	// events, which no run reaches) — see compaction.go.
	CompactionEventsThreshold int64
	// RotateEvery rotates the backup store's credentials after every RotateEvery-th round, and after the
	// last round when the run had none yet (0: never) — see rotation.go.
	RotateEvery int
}

// rotateAfter reports whether the credentials are rotated after round n (1-based) of a plan of rounds,
// given how many rotations the run had so far.
func (b Background) rotateAfter(n, rounds, rotated int) bool {
	if b.RotateEvery <= 0 {
		return false
	}
	return n%b.RotateEvery == 0 || (n == rounds && rotated == 0)
}

// disturbances are the spans of the run in which something was disturbed on purpose: from a fault's
// injection to the end of its round (the cluster Ready again, every check done) and a credential rotation
// from its first step to its last. Background work that overlaps one may fail; outside, it must not.
type disturbances struct {
	mu    sync.Mutex
	spans [][2]time.Time
	open  *time.Time
}

// begin opens a span at t.
func (d *disturbances) begin(t time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.open = &t
}

// end closes the open span at t.
func (d *disturbances) end(t time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.open != nil {
		d.spans = append(d.spans, [2]time.Time{*d.open, t})
		d.open = nil
	}
}

// overlaps reports whether [from, to] meets a span (an open one lasts until now).
func (d *disturbances) overlaps(from, to time.Time) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.open != nil && !to.Before(*d.open) {
		return true
	}
	for _, s := range d.spans {
		if !to.Before(s[0]) && !from.After(s[1]) {
			return true
		}
	}
	return false
}

// countedSummary counts equal outcomes in the order they first occur, for a table cell: "2 ok, 1 Failed";
// "—" for none.
func countedSummary(outcomes []string) string {
	if len(outcomes) == 0 {
		return "—"
	}
	counts := map[string]int{}
	var order []string
	for _, k := range outcomes {
		if counts[k] == 0 {
			order = append(order, k)
		}
		counts[k]++
	}
	parts := make([]string, 0, len(order))
	for _, k := range order {
		parts = append(parts, fmt.Sprintf("%d %s", counts[k], k))
	}
	return strings.Join(parts, ", ")
}
