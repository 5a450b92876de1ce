package chaos

import (
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

func names(plan []Fault) []string {
	var out []string
	for _, f := range plan {
		out = append(out, f.Name)
	}
	return out
}

// A plan covers every fault once before repeating any, gives each long fault one round, and is the same
// for the same seed (a run can be replayed) but not for another.
func TestPlan(t *testing.T) {
	faults := Faults(FullDurations)
	plan := Plan(faults, 30, 7)
	if len(plan) != 30 {
		t.Fatalf("got %d rounds, want 30", len(plan))
	}
	first := names(plan[:len(faults)])
	for _, f := range faults {
		if !slices.Contains(first, f.Name) {
			t.Errorf("fault %q is not among the first %d rounds %v", f.Name, len(faults), first)
		}
	}
	for _, f := range plan[len(faults):] {
		if Long(f) {
			t.Errorf("long fault %q repeated", f.Name)
		}
	}
	if again := names(Plan(faults, 30, 7)); !slices.Equal(again, names(plan)) {
		t.Errorf("same seed, other plan:\n%v\n%v", again, names(plan))
	}
	if other := names(Plan(faults, 30, 8)); slices.Equal(other, names(plan)) {
		t.Errorf("seeds 7 and 8 gave the same plan %v", other)
	}
	if short := Plan(faults, 3, 7); len(short) != 3 {
		t.Errorf("got %d rounds, want 3", len(short))
	}
}

func TestFaultNames(t *testing.T) {
	got := names(Faults(Durations{NetworkCut: 20 * time.Second, S3Down: 2 * time.Minute, DruidDown: 90 * time.Second}))
	for _, want := range []string{"network cut 20s", "S3 down 2m", "druid at 0 1m30s"} {
		if !slices.Contains(got, want) {
			t.Errorf("no fault %q in %v", want, got)
		}
	}
}

func TestPodChanges(t *testing.T) {
	before := map[string]podState{
		"etcd-main-0": {uid: "a", restarts: map[string]int32{"etcd": 1, "backup-restore": 0}},
		"etcd-main-1": {uid: "b", restarts: map[string]int32{"etcd": 0}},
	}
	after := map[string]podState{
		"etcd-main-0":  {uid: "a", restarts: map[string]int32{"etcd": 3, "backup-restore": 0}},
		"etcd-main-1":  {uid: types.UID("c"), restarts: map[string]int32{"etcd": 0}},
		"etcd-druid-x": {uid: "d", restarts: map[string]int32{}},
	}
	got := podChanges(before, after)
	want := []string{"etcd-druid-x recreated", "etcd-main-0/etcd restarted ×2", "etcd-main-1 recreated"}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if got := podChanges(before, before); len(got) != 0 {
		t.Errorf("no change: got %v", got)
	}
}
