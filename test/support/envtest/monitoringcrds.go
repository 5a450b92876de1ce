package envtest

import (
	"context"
	"testing"

	"github.com/gardener/gardener/pkg/component/observability/monitoring/prometheusoperator"
)

// InstallMonitoringCRDs installs the Prometheus Operator's CRDs a Gardener seed has (Gardener's own
// component installs them), so that Gardener's etcd component and ours write their ServiceMonitor and
// PrometheusRule. They stay for the rest of the suite; a second install changes nothing.
func (e *Env) InstallMonitoringCRDs(t testing.TB) {
	t.Helper()
	ctx := context.Background()
	crds, err := prometheusoperator.NewCRDs(e.Client)
	if err != nil {
		t.Fatal(err)
	}
	if err := crds.Deploy(ctx); err != nil {
		t.Fatal(err)
	}
	if err := crds.Wait(ctx); err != nil {
		t.Fatal(err)
	}
}
