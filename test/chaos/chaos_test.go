//go:build chaos

package chaos

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestChaos is `make chaos`: CHAOS_ROUNDS rounds (default 30) of faults in an order drawn from CHAOS_SEED
// (default: the time; printed, so that a run can be replayed), with the full durations (the issue's
// ten-minute druid and apiserver outages), each overridable: CHAOS_NETWORK_CUT, CHAOS_S3_DOWN,
// CHAOS_DRUID_DOWN, CHAOS_APISERVER_DOWN, CHAOS_STALE_LEASES, CHAOS_FROZEN_SIDECARS, CHAOS_DISK_FULL (Go durations).
// CHAOS_ONLY (comma-separated name prefixes, e.g. "kill -9,network cut") limits the run to those faults.
// Besides the faults (background.go): on-demand snapshot EtcdOpsTasks in every round, compaction Jobs at
// CHAOS_COMPACTION_EVENTS delta events (default 1500, about a minute and a half of the writer's writes) and
// a rotation of the backup credentials every CHAOS_ROTATE_EVERY rounds (default 10; at least one per run).
func TestChaos(t *testing.T) {
	rounds := envInt(t, "CHAOS_ROUNDS", 30)
	seed := uint64(envInt(t, "CHAOS_SEED", int(time.Now().UnixNano()%1_000_000)))
	d := FullDurations
	for name, p := range map[string]*time.Duration{"CHAOS_NETWORK_CUT": &d.NetworkCut, "CHAOS_S3_DOWN": &d.S3Down,
		"CHAOS_DRUID_DOWN": &d.DruidDown, "CHAOS_APISERVER_DOWN": &d.APIServerDown, "CHAOS_STALE_LEASES": &d.StaleLeases,
		"CHAOS_FROZEN_SIDECARS": &d.FrozenSidecars, "CHAOS_DISK_FULL": &d.DiskFull} {
		if v := os.Getenv(name); v != "" {
			parsed, err := time.ParseDuration(v)
			if err != nil {
				t.Fatalf("%s=%q: %v", name, v, err)
			}
			*p = parsed
		}
	}
	faults := Faults(d)
	if only := os.Getenv("CHAOS_ONLY"); only != "" {
		var picked []Fault
		for _, f := range faults {
			for _, prefix := range strings.Split(only, ",") {
				if strings.HasPrefix(f.Name, strings.TrimSpace(prefix)) {
					picked = append(picked, f)
				}
			}
		}
		if len(picked) == 0 {
			t.Fatalf("CHAOS_ONLY=%q names no fault", only)
		}
		faults = picked
	}
	plan := Plan(faults, rounds, seed)
	t.Logf("CHAOS_SEED=%d CHAOS_ROUNDS=%d (replay: make chaos CHAOS_SEED=%d CHAOS_ROUNDS=%d)", seed, rounds, seed, rounds)
	for i, f := range plan {
		t.Logf("plan: round %d: %s", i+1, f.Name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Hour)
	defer cancel()
	bg := Background{OpsTasks: true, CompactionEventsThreshold: int64(envInt(t, "CHAOS_COMPACTION_EVENTS", 1500)),
		RotateEvery: envInt(t, "CHAOS_ROTATE_EVERY", 10)}
	t.Logf("background: EtcdOpsTasks in every round, compaction at %d delta events, credential rotation every %d rounds",
		bg.CompactionEventsThreshold, bg.RotateEvery)
	s := startSuite(t, ctx, bg)
	begin := time.Now()
	results := s.Run(ctx, plan, seed)
	PrintTable(t.Output(), seed, results)
	t.Logf("DURATION chaos rounds: %s", time.Since(begin).Round(time.Second))
	checkResults(t, results)
}

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive number", name, v)
	}
	return n
}
