package copybackupstask

import (
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
)

// ControllerName names the controller in logs, metrics and as the events' reporting controller.
const ControllerName = "etcd-copy-backups-task"

// AddToManager registers the EtcdCopyBackupsTask controller with mgr. Worker Jobs carry
// app.kubernetes.io/managed-by=etcd-druid, so a manager cache limited to druid-labelled Jobs sees them.
func AddToManager(mgr manager.Manager, cfg config.CopyBackupsTaskController) error {
	cfg.Default()
	if err := cfg.Validate(); err != nil {
		return err
	}
	r := &Reconciler{
		Client:   mgr.GetClient(),
		Recorder: mgr.GetEventRecorder(ControllerName),
		Config:   cfg,
		Clock:    clock.RealClock{},
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&druidv1alpha1.EtcdCopyBackupsTask{}).
		Owns(&batchv1.Job{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(obj client.Object) bool {
			return obj.GetLabels()[druidv1alpha1.LabelComponentKey] == ComponentCopyBackupsJob
		}))).
		WithOptions(controller.Options{MaxConcurrentReconciles: cfg.Workers}).
		Complete(r)
}
