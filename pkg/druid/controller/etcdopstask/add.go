package etcdopstask

import (
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/fullsnapshot"
)

// ControllerName names the controller in logs, metrics and as the events' reporting controller.
const ControllerName = "etcd-ops-task"

// AddToManager registers the EtcdOpsTask controller with mgr when cfg.Enabled is set. Snapshots are asked
// for through fullsnapshot.HTTP on each Etcd's client Service, reading the backup TLS Secrets from the
// apiserver (druid's cache holds none with their data).
func AddToManager(mgr manager.Manager, cfg config.EtcdOpsTaskController) error {
	return AddToManagerWith(mgr, cfg, &fullsnapshot.HTTP{Reader: mgr.GetAPIReader()})
}

// AddToManagerWith is AddToManager with the Snapshotter to call (tests point fullsnapshot.HTTP at a
// stand-in sidecar).
func AddToManagerWith(mgr manager.Manager, cfg config.EtcdOpsTaskController, snapshots Snapshotter) error {
	cfg.Default()
	if !cfg.Enabled {
		return nil
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	r := &Reconciler{
		Client:        mgr.GetClient(),
		Reader:        mgr.GetAPIReader(),
		Recorder:      mgr.GetEventRecorder(ControllerName),
		Snapshots:     snapshots,
		Clock:         clock.RealClock{},
		RetryInterval: cfg.RetryInterval,
		MinInterval:   cfg.MinInterval,
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		// Status writes are the controller's own and bring nothing new; a task moves on within one
		// reconcile, or when a requeue (retry, TTL) is due. Without this filter a retry would follow its
		// own status write at once instead of after RetryInterval.
		For(&druidv1alpha1.EtcdOpsTask{}, builder.WithPredicates(specOrDeletionChanged())).
		WithOptions(controller.Options{MaxConcurrentReconciles: cfg.Workers}).
		Complete(r)
}

// specOrDeletionChanged lets creations, deletions and updates that change the generation or mark the task
// for deletion through.
func specOrDeletionChanged() predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		return e.ObjectOld.GetGeneration() != e.ObjectNew.GetGeneration() || !e.ObjectNew.GetDeletionTimestamp().IsZero()
	}}
}
