// Package gardener_test runs the Gardener ⇄ extension ⇄ druid workflow end to end on one apiserver: the backup extension's
// controllers (local provider and s3 on versitygw) create the bucket and the etcd-backup secret and expose it
// in the BackupEntry status; the botanist's Deploy writes the Etcd with that secret and the TLS secrets; and
// druid's real Etcd controller creates the StatefulSet only once every referenced secret exists.
//
// The extension runs for the whole suite. Druid is started by each test after it prepared the Etcd, so the
// test decides what druid sees first instead of racing it.
package gardener_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/controller"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/controller/backupbucket"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/controller/backupentry"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
	etcdcontroller "github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/etcd"
	"github.com/gardener-etcd/gardener-etcd/test/support/envtest"
)

var (
	env       *envtest.Env
	localRoot string
)

func TestMain(m *testing.M) {
	envtest.MainWith(m, &env, envtest.Options{}, startExtension)
}

// startExtension runs the BackupBucket and BackupEntry controllers as the extension binary does (secrets
// never cached).
func startExtension(ctx context.Context, e *envtest.Env) error {
	logger := logr.Discard()
	if os.Getenv("GARDENER_TEST_LOG") != "" {
		logger = ctrl.Log
	}
	log.SetLogger(logger)
	var err error
	if localRoot, err = e.TempDir("gardener-workflow-local-"); err != nil {
		return err
	}
	if err := e.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "garden"}}); err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(e.Config, ctrl.Options{
		Scheme:                 envtest.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Client:                 etcdcontroller.ClientOptions(),
	})
	if err != nil {
		return err
	}
	if err := backupbucket.AddToManager(mgr, backupbucket.Options{Options: controller.Options{LocalRoot: localRoot}}); err != nil {
		return err
	}
	if err := backupentry.AddToManager(mgr, backupentry.Options{Options: controller.Options{LocalRoot: localRoot}}); err != nil {
		return err
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "extension manager:", err)
		}
	}()
	return nil
}

// startDruid runs druid's Etcd controller with the cache and client options of the binary and auto-reconcile
// off (as Gardener runs it) until the test ends.
func startDruid(t *testing.T) {
	t.Helper()
	mgr, err := ctrl.NewManager(env.Config, etcdcontroller.NewManagerOptions(ctrl.Options{
		Scheme:                 envtest.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// Each test starts its own druid; controller names only need to be unique within one process run.
		Controller: ctrlconfig.Controller{SkipNameValidation: ptr.To(true)},
	}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := etcdcontroller.AddToManager(ctx, mgr, config.EtcdController{
		Workers:          2,
		StatusSyncPeriod: time.Second,
		Images:           config.Images{EtcdWrapper: "example.org/etcd-wrapper:v1", BackupRestore: "example.org/etcdbrctl:v1"},
		// The backup extension's Local buckets live below the suite's temporary root.
		LocalBackup: config.LocalBackup{AllowedHostPaths: []string{localRoot}},
	}); err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("druid manager: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
}
