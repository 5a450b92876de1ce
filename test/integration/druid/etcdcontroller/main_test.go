// Package etcdcontroller_test runs druid's Etcd controller in a controller-runtime manager against a real
// kube-apiserver (test/support/envtest). There is no kubelet, StatefulSet controller or sidecar: the tests write
// the pods' status, the StatefulSet's status and the member leases themselves, as those would.
package etcdcontroller_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
	etcdcontroller "github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/coreevents"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/fullsnapshot"
	"github.com/gardener-etcd/gardener-etcd/test/support/envtest"
)

var env *envtest.Env

// Short thresholds so that member health degrades within seconds: Unknown after 2 s without renewal,
// NotReady after 2 s + 3 s; the status flow runs every second.
var testConfig = config.EtcdController{
	Workers:                     2,
	StatusSyncPeriod:            time.Second,
	EtcdMemberUnknownThreshold:  2 * time.Second,
	EtcdMemberNotReadyThreshold: 3 * time.Second,
	Images:                      config.Images{EtcdWrapper: "example.org/etcd-wrapper:v1", BackupRestore: "example.org/etcdbrctl:v1"},
	// A sidecar that refuses druid's certificate holds an update for a few seconds here, not minutes.
	FullSnapshotRefusalGrace: 3 * time.Second,
	// A member volume bound to a node unreachable for 3 s counts as lost here.
	NodeUnreachableGrace: 3 * time.Second,
}

// druidConfig is the configuration the running druid was started with: testConfig, but for a test that
// restarted it with restartDruidWith.
var druidConfig = testConfig

// TestMain runs the suite on the chart's CRDs: upstream's Etcd CRD without CEL rules, which lets the suite
// drive druid's scale-in (members leave before their pods); upstream's CEL variant, which gardenlet
// installs, refuses it at the apiserver (spec.replicas may only grow or go to 0). The CEL rules themselves
// are covered by the apis suite.
func TestMain(m *testing.M) {
	envtest.MainWith(m, &env, envtest.Options{}, startManager)
}

// druid is the running manager, which restartDruid replaces as a restarted druid pod would be.
var druid struct {
	ctx    context.Context // the suite's
	env    *envtest.Env
	cancel context.CancelFunc
	done   chan struct{}
	// cache is the running manager's cache, for tests that wait until druid has seen an object.
	cache cache.Cache
}

// startManager runs the controller in-process, with the cache and client options druid uses, no leader
// election and no metrics listener. DRUID_TEST_LOG=1 shows the controller's log.
func startManager(ctx context.Context, e *envtest.Env) error {
	logger := logr.Discard()
	if os.Getenv("DRUID_TEST_LOG") != "" {
		logger = zap.New(zap.UseDevMode(true), zap.WriteTo(os.Stderr))
	}
	log.SetLogger(logger)
	druid.ctx, druid.env = ctx, e
	return runDruid(e.Config)
}

// runDruid starts a manager with the Etcd controller under identity and waits until its cache synced.
func runDruid(identity *rest.Config) error {
	base, err := ctrl.NewManager(identity, etcdcontroller.NewManagerOptions(ctrl.Options{
		Scheme:                 envtest.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		LeaderElection:         false,
		// A restarted druid registers its controller again in the same process.
		Controller: ctrlconfig.Controller{SkipNameValidation: ptr.To(true)},
	}))
	if err != nil {
		return err
	}
	// The full snapshot before hibernation or new images goes to the namespace's stand-in sidecar.
	snapshots := &fullsnapshot.HTTP{Reader: druid.env.Client, Endpoint: snapshotSidecars.Of}
	ctx, cancel := context.WithCancel(druid.ctx)
	// Core events, as druid's command records them (a role granting only core events loses none).
	mgr, err := coreevents.Wrap(ctx, base, identity)
	if err != nil {
		cancel()
		return err
	}
	if err := etcdcontroller.AddToManager(ctx, mgr, druidConfig, etcdcontroller.WithFullSnapshotRequester(snapshots)); err != nil {
		cancel()
		return err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	}()
	druid.cancel, druid.done, druid.cache = cancel, done, mgr.GetCache()
	syncCtx, cancelSync := context.WithTimeout(ctx, time.Minute)
	defer cancelSync()
	if !mgr.GetCache().WaitForCacheSync(syncCtx) {
		return fmt.Errorf("manager cache did not sync")
	}
	return nil
}

// restartDruid stops the running druid (its in-memory state goes with it) and starts a new one.
func restartDruid(t *testing.T) {
	t.Helper()
	druid.cancel()
	<-druid.done
	if err := runDruid(druid.env.Config); err != nil {
		t.Fatalf("restarting druid: %v", err)
	}
}

// restartDruidAs restarts druid under identity (it probes its permissions at start, as a deployed druid
// does) until the test ends, then under the suite's own identity again.
func restartDruidAs(t *testing.T, identity *rest.Config) {
	t.Helper()
	druid.cancel()
	<-druid.done
	t.Cleanup(func() { restartDruid(t) }) // also after a failed start: the stopped druid is cancelled and done
	if err := runDruid(identity); err != nil {
		t.Fatalf("starting druid under another identity: %v", err)
	}
}

// restartDruidWith restarts druid with cfg until the test ends, then with testConfig again.
func restartDruidWith(t *testing.T, cfg config.EtcdController) {
	t.Helper()
	druidConfig = cfg
	t.Cleanup(func() {
		druidConfig = testConfig
		restartDruid(t)
	})
	restartDruid(t)
}
