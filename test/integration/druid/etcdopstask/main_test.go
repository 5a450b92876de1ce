// Package etcdopstask tests druid's EtcdOpsTask controller against a real kube-apiserver, with the
// controller in an in-process manager. No etcd runs: the Etcds' status is written by the tests, and the
// backup leader's sidecar is a stand-in (test/support/sidecarstandin) that druid calls over TLS with the Etcd's
// backup client certificate, as it calls the real one.
package etcdopstask

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/etcdopstask"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/fullsnapshot"
	"github.com/gardener-etcd/gardener-etcd/test/support/envtest"
	"github.com/gardener-etcd/gardener-etcd/test/support/sidecarstandin"
)

var (
	env *envtest.Env
	// sidecars are the stand-in backup leaders by namespace; druid calls them instead of
	// https://<name>-client.<namespace>.svc:8080.
	sidecars sidecarstandin.Endpoints
)

// retryInterval is short so that a sidecar that cannot be reached fails a task within its timeout (10 s
// for a delta) after a few tries.
const retryInterval = 500 * time.Millisecond

// minInterval is long enough that no test runs two tasks of one kind of one Etcd within it by chance.
const minInterval = time.Hour

func TestMain(m *testing.M) {
	envtest.MainWith(m, &env, envtest.Options{}, startManager)
}

func startManager(ctx context.Context, env *envtest.Env) error {
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:  envtest.Scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
	})
	if err != nil {
		return err
	}
	snapshots := &fullsnapshot.HTTP{Reader: mgr.GetAPIReader(), Endpoint: sidecars.Of}
	cfg := config.EtcdOpsTaskController{Enabled: true, RetryInterval: retryInterval, MinInterval: minInterval}
	if err := etcdopstask.AddToManagerWith(mgr, cfg, snapshots); err != nil {
		return err
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	}()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return fmt.Errorf("manager cache did not sync")
	}
	return nil
}
