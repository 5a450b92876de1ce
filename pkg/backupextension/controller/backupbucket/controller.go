package backupbucket

import (
	"sigs.k8s.io/controller-runtime/pkg/manager"

	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/controller"
)

// kind tells the shared skeleton how to handle BackupBuckets.
var kind = controller.Kind[*extensionsv1alpha1.BackupBucket]{
	Name:      ControllerName,
	New:       func() *extensionsv1alpha1.BackupBucket { return &extensionsv1alpha1.BackupBucket{} },
	Finalizer: extensionsv1alpha1.BackupBucketFinalizer,
	Status: func(bb *extensionsv1alpha1.BackupBucket) *extensionsv1alpha1.DefaultStatus {
		return &bb.Status.DefaultStatus
	},
	Type: func(bb *extensionsv1alpha1.BackupBucket) string { return bb.Spec.Type },
	LogValues: func(bb *extensionsv1alpha1.BackupBucket) []any {
		return []any{"backupBucket", bb.Name, "type", bb.Spec.Type}
	},
}

// AddToManager registers the BackupBucket controller with the manager.
func AddToManager(mgr manager.Manager, opts Options) error {
	opts = opts.withDefaults()
	a := &actuator{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Options: opts, Recorder: mgr.GetEventRecorder(ControllerName)}
	return controller.Add(mgr, kind, a, opts.Options)
}
