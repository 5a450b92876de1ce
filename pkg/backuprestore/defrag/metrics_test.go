package defrag

import (
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
	"github.com/gardener-etcd/gardener-etcd/test/support/metricstest"
)

// etcdbr_defragmentation_duration_seconds{succeeded,endpoint} counts each member's defragmentation under
// its client endpoint and outcome; the endpoint="" series exist from the start, as upstream.
func TestDefragmentationDurationByOutcomeAndEndpoint(t *testing.T) {
	const name = "etcdbr_defragmentation_duration_seconds"
	c := etcdserver.Start(t)
	cli := c.Client(t)
	etcdserver.Fragment(t, cli)
	registry := prometheus.NewPedanticRegistry()
	metrics := NewMetrics(registry)
	for _, succeeded := range []string{"true", "false"} {
		if got := metricstest.Count(t, registry, name, map[string]string{"succeeded": succeeded, "endpoint": ""}); got != 0 {
			t.Fatalf("%s{succeeded=%s,endpoint=\"\"} = %d before any run, want 0", name, succeeded, got)
		}
	}

	res, err := Run(t.Context(), Options{Client: cli, Metrics: metrics, Log: testr.New(t)})
	if err != nil {
		t.Fatal(err)
	}
	endpoint := res.Members[0].Endpoint
	if got := metricstest.Count(t, registry, name, map[string]string{"succeeded": "true", "endpoint": endpoint}); got != 1 {
		t.Fatalf("%s{succeeded=true,endpoint=%s} = %d, want 1", name, endpoint, got)
	}

	// A timeout no defragmentation meets fails the member's turn.
	if _, err := Run(t.Context(), Options{Client: cli, Timeout: time.Nanosecond, Metrics: metrics, Log: testr.New(t)}); err == nil {
		t.Fatal("defragmentation within a nanosecond succeeded")
	}
	if got := metricstest.Count(t, registry, name, map[string]string{"succeeded": "false", "endpoint": endpoint}); got != 1 {
		t.Fatalf("%s{succeeded=false,endpoint=%s} = %d, want 1", name, endpoint, got)
	}
}

// The runs by trigger, the recovery steps by outcome and the over-quota state are exported at zero from
// the start, so that alerts on them work before the first occurrence.
func TestRecoveryMetricsExistFromTheStart(t *testing.T) {
	registry := prometheus.NewPedanticRegistry()
	NewMetrics(registry)
	for _, trigger := range []Trigger{TriggerSchedule, TriggerFragmentation, TriggerQuota, TriggerNoSpace} {
		if got := metricstest.Value(t, registry, "etcdbr_defragmentation_runs_total", map[string]string{"trigger": string(trigger)}); got != 0 {
			t.Fatalf("runs{trigger=%s} = %v", trigger, got)
		}
	}
	for _, step := range []string{stepCompact, stepRefresh, stepDefragment, stepDisarm, stepSnapshot} {
		for _, succeeded := range []string{"true", "false"} {
			if got := metricstest.Value(t, registry, "etcdbr_nospace_recovery_steps_total", map[string]string{"step": step, "succeeded": succeeded}); got != 0 {
				t.Fatalf("steps{step=%s,succeeded=%s} = %v", step, succeeded, got)
			}
		}
	}
	if got := metricstest.Value(t, registry, "etcdbr_nospace_over_quota", nil); got != 0 {
		t.Fatalf("over quota = %v", got)
	}
}
