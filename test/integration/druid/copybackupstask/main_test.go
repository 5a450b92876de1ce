// Package copybackupstask tests druid's EtcdCopyBackupsTask controller against a real kube-apiserver, with the
// controller in an in-process manager. There is no Job controller: the tests set the Job conditions the Job
// controller would.
package copybackupstask

import (
	"context"
	"fmt"
	"os"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/copybackupstask"
	"github.com/gardener-etcd/gardener-etcd/test/support/envtest"
)

const testImage = "example.org/etcdbrctl:v1"

var env *envtest.Env

func TestMain(m *testing.M) {
	envtest.MainWith(m, &env, envtest.Options{}, startManager)
}

func startManager(ctx context.Context, env *envtest.Env) error {
	druidObjects := cache.ByObject{Label: labels.SelectorFromSet(labels.Set{druidv1alpha1.LabelManagedByKey: druidv1alpha1.LabelManagedByValue})}
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:  envtest.Scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
		// As druid runs: only druid-labelled Leases and Jobs are cached.
		Cache: cache.Options{ByObject: map[client.Object]cache.ByObject{
			&coordinationv1.Lease{}: druidObjects,
			&batchv1.Job{}:          druidObjects,
		}},
	})
	if err != nil {
		return err
	}
	if err := copybackupstask.AddToManager(mgr, config.CopyBackupsTaskController{BackupRestoreImage: testImage}); err != nil {
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
