package backupentry

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/controller"
)

// kind tells the shared skeleton how to handle BackupEntries.
var kind = controller.Kind[*extensionsv1alpha1.BackupEntry]{
	Name:      ControllerName,
	New:       func() *extensionsv1alpha1.BackupEntry { return &extensionsv1alpha1.BackupEntry{} },
	Finalizer: extensionsv1alpha1.BackupEntryFinalizer,
	Status: func(be *extensionsv1alpha1.BackupEntry) *extensionsv1alpha1.DefaultStatus {
		return &be.Status.DefaultStatus
	},
	Type: func(be *extensionsv1alpha1.BackupEntry) string { return be.Spec.Type },
	LogValues: func(be *extensionsv1alpha1.BackupEntry) []any {
		return []any{"backupEntry", be.Name, "type", be.Spec.Type, "bucket", be.Spec.BucketName}
	},
	Incomplete: Incomplete,
}

// AddToManager registers the BackupEntry controller with the manager. Besides BackupEntries it watches the
// creation of namespaces, so an entry that succeeded without its shoot namespace (Incomplete) writes the etcd
// backup secret as soon as the namespace appears, not only at gardenlet's next reconcile.
func AddToManager(mgr manager.Manager, opts Options) error {
	a := &actuator{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder(ControllerName)}
	onlyCreate := predicate.Funcs{
		UpdateFunc:  func(event.UpdateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
	namespaces := controller.Watch{
		Object:     &corev1.Namespace{},
		Handler:    handler.EnqueueRequestsFromMapFunc(a.entriesOfNamespace),
		Predicates: []predicate.Predicate{onlyCreate},
	}
	return controller.Add(mgr, kind, a, opts.Options, namespaces)
}

// entriesOfNamespace maps a namespace to the BackupEntries of the shoot living in it.
func (a *actuator) entriesOfNamespace(ctx context.Context, ns client.Object) []reconcile.Request {
	entries := &extensionsv1alpha1.BackupEntryList{}
	if err := a.Client.List(ctx, entries); err != nil {
		logf.FromContext(ctx).Error(err, "Listing backup entries for a new namespace failed", "namespace", ns.GetName())
		return nil
	}
	var requests []reconcile.Request
	for _, be := range entries.Items {
		if shootNamespace, err := ShootNamespace(be.Name); err == nil && shootNamespace == ns.GetName() {
			requests = append(requests, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&be)})
		}
	}
	return requests
}
