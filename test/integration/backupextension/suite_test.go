// Package backupextension_test runs the BackupBucket and BackupEntry controllers in-process against a real
// apiserver (envtest) and real stores (a host directory, versitygw), and checks what gardenlet and the
// Gardener-side etcd component rely on.
package backupextension_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/controller"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/controller/backupbucket"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/controller/backupentry"
	"github.com/gardener-etcd/gardener-etcd/test/support/envtest"
)

var (
	env *envtest.Env
	// localRoot is the default directory of local buckets for the whole suite.
	localRoot string
)

// namespaceRetryInterval is long on purpose: a test that waits for a namespace passes only if the namespace
// watch, not the periodic retry, triggers the reconcile.
const namespaceRetryInterval = time.Hour

// TestMain skips the package under -short, as envtest.Main does: unit runs need no binaries.
func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		fmt.Println("envtest: skipping integration tests in -short mode")
		os.Exit(0)
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	if localRoot, err = os.MkdirTemp("", "backupextension-local-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(localRoot)

	if env, err = envtest.Start(envtest.Options{}); err != nil {
		fmt.Fprintln(os.Stderr, "envtest:", err)
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping envtest:", err)
		}
	}()
	if err := env.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "garden"}}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}

	ctrl.SetLogger(zap.New(zap.UseDevMode(true), zap.WriteTo(os.Stderr)))
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 envtest.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "manager:", err)
		return 1
	}
	if err := backupbucket.AddToManager(mgr, backupbucket.Options{Options: controller.Options{LocalRoot: localRoot}}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := backupentry.AddToManager(mgr, backupentry.Options{Options: controller.Options{LocalRoot: localRoot}, NamespaceRetryInterval: namespaceRetryInterval}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- mgr.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-stopped; err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	}()
	return m.Run()
}
