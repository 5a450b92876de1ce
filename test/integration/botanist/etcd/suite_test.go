// Package etcd_test checks the Gardener-side etcd component against a real apiserver with the backup
// extension's controllers running in-process (local provider), so the chain Gardener ⇄ extension ⇄ druid is real:
// BackupBucket → BackupEntry → etcd-backup secret named in the entry's status → Etcd with that secret and the
// TLS secrets. Druid is not running: the tests play its part by writing the Etcd status and removing the
// operation annotation, which is all the component observes.
package etcd_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"

	"go.uber.org/zap/zapcore"
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
	// localRoot holds the local buckets of the whole suite.
	localRoot string
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		fmt.Println("skipping envtest suite in -short mode")
		return
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	if localRoot, err = os.MkdirTemp("", "botanist-etcd-local-"); err != nil {
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
	// Only errors: the tests' own failures are what a reader of this suite's output looks for.
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel)))
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
	if err := backupentry.AddToManager(mgr, backupentry.Options{Options: controller.Options{LocalRoot: localRoot}}); err != nil {
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
