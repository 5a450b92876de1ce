package compaction

import (
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/fullsnapshot"
)

// ControllerName names the controller in logs, metrics and as the events' reporting controller.
const ControllerName = "etcd-compaction"

// AddToManager registers the compaction controller and its metrics when cfg.EnableBackupCompaction is set.
//
// It watches Etcds (spec changes), snapshot leases and compaction Jobs. The manager's cache should be limited
// to druid-labelled Leases and Jobs (app.kubernetes.io/managed-by=etcd-druid), so that druid never caches
// every Lease or Job of the seed; both carry that label.
func AddToManager(mgr manager.Manager, cfg config.CompactionController) error {
	return AddToManagerWith(mgr, cfg, &fullsnapshot.HTTP{Reader: mgr.GetClient()})
}

// AddToManagerWith is AddToManager with the fullsnapshot.Requester to ask beyond triggerFullSnapshotThreshold
// (tests pass one that records the requests). The manager's client should not cache Secrets
// (etcdcontroller.NewManagerOptions): fullsnapshot.HTTP reads the backup TLS Secrets through it.
func AddToManagerWith(mgr manager.Manager, cfg config.CompactionController, snapshotter fullsnapshot.Requester) error {
	cfg.Default()
	if !cfg.EnableBackupCompaction {
		return nil
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	registerMetrics()
	r := &Reconciler{
		Client:   mgr.GetClient(),
		Recorder: mgr.GetEventRecorder(ControllerName),
		Config:   cfg,
		Clock:    clock.RealClock{},

		FullSnapshotter: snapshotter,
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&druidv1alpha1.Etcd{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&coordinationv1.Lease{},
			handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), &druidv1alpha1.Etcd{}, handler.OnlyControllerOwner()),
			builder.WithPredicates(hasComponent(druidv1alpha1.ComponentSnapshotLease))).
		Owns(&batchv1.Job{}, builder.WithPredicates(hasComponent(ComponentCompactionJob))).
		WithOptions(controller.Options{MaxConcurrentReconciles: cfg.Workers}).
		Complete(r)
}

// hasComponent passes objects with the given app.kubernetes.io/component label.
func hasComponent(component string) predicate.Predicate {
	return predicate.NewPredicateFuncs(func(obj client.Object) bool {
		return obj.GetLabels()[druidv1alpha1.LabelComponentKey] == component
	})
}
