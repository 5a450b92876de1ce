// Package secretfinalizer tests druid's secret finalizer controller against a real kube-apiserver with the
// controller running in an in-process manager: the finalizers are read back from the apiserver.
package secretfinalizer

import (
	"context"
	"fmt"
	"os"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/secret"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/secretref"
	"github.com/gardener-etcd/gardener-etcd/test/support/envtest"
)

var env *envtest.Env

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
	if err := secret.AddToManager(ctx, mgr, config.SecretController{}); err != nil {
		return err
	}
	// The Etcd controller registers the same index; a second registration must not fail.
	if err := secretref.AddIndex(ctx, mgr.GetFieldIndexer()); err != nil {
		return fmt.Errorf("registering the index twice: %w", err)
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
