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
	fragment(t, cli)
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
