package chaos

import (
	"context"
	"testing"
	"time"
)

// shortDurations keep the quick variant's faults short: the network cut and the store outage still stop
// the member's and the sidecar's traffic for longer than etcd's election timeout and a delta period.
var shortDurations = Durations{NetworkCut: 20 * time.Second, S3Down: 20 * time.Second, DiskFull: 30 * time.Second}

// TestChaosShort is the quick variant of the chaos suite that `make test` runs (as root with the tools):
// one round each of kill -9 of a member's etcd and backup-restore containers, a store outage, a member's
// network cut, a member's full disk and the unauthenticated attacks; every acknowledged write must be on every member after
// each. `make chaos` runs the full suite (TestChaos, build tag chaos).
func TestChaosShort(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	begin := time.Now()
	// An on-demand snapshot task in every round, settled and during the fault; no compaction threshold (no
	// Jobs) and no credential rotation: those are the full run's.
	s := startSuite(t, ctx, Background{OpsTasks: true})
	byName := map[string]Fault{}
	for _, f := range Faults(shortDurations) {
		byName[f.Name] = f
	}
	var plan []Fault
	for _, name := range []string{"kill -9 etcd", "kill -9 backup-restore", "S3 down 20s", "network cut 20s", "disk full 30s", "attack endpoints"} {
		f, ok := byName[name]
		if !ok {
			t.Fatalf("no fault %q", name)
		}
		plan = append(plan, f)
	}
	const seed = 12
	results := s.Run(ctx, plan, seed)
	PrintTable(t.Output(), seed, results)
	checkResults(t, results)
	t.Logf("DURATION chaos short (seed up to the last round): %s", time.Since(begin).Round(time.Second))
}
