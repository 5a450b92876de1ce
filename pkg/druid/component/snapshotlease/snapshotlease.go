// Package snapshotlease manages the snapshot Leases `<n>-full-snap` and `<n>-delta-snap`. The backup
// leader's sidecar records the revision and time of its last full and delta snapshot in them; druid derives
// BackupReady and compaction from them. They exist only while a backup store is configured.
package snapshotlease

import (
	"context"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
)

const kind = component.KindSnapshotLease

type operator struct {
	client component.Clients
}

// New returns the snapshot Lease operator.
func New(c component.Clients) component.Operator {
	return &operator{client: c}
}

func emptyLeases(etcd *druidv1alpha1.Etcd) []client.Object {
	return []client.Object{
		&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: druidv1alpha1.FullSnapshotLeaseName(etcd), Namespace: etcd.Namespace}},
		&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: druidv1alpha1.DeltaSnapshotLeaseName(etcd), Namespace: etcd.Namespace}},
	}
}

// Sync creates both leases when spec.backup.store is set (leaving their spec to the sidecar) and deletes
// them otherwise, so that a stale snapshot time cannot make BackupReady lie after backups were turned off.
func (o *operator) Sync(ctx context.Context, etcd *druidv1alpha1.Etcd) error {
	logger := log.FromContext(ctx).WithValues("etcd", client.ObjectKeyFromObject(etcd))
	if etcd.Spec.Backup.Store == nil {
		err := component.DeleteIgnoringNotFound(ctx, o.client, emptyLeases(etcd)...)
		return component.WrapError(err, component.OperationSync, kind, "deleting snapshot leases of an Etcd without backup store")
	}
	for _, name := range []string{druidv1alpha1.FullSnapshotLeaseName(etcd), druidv1alpha1.DeltaSnapshotLeaseName(etcd)} {
		_, result, err := component.CreateOrPatch(ctx, o.client, func() *coordinationv1.Lease {
			return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: etcd.Namespace}}
		}, func(lease *coordinationv1.Lease) error {
			component.ApplyManagedMeta(lease, etcd, druidv1alpha1.ComponentSnapshotLease)
			return nil
		})
		if err != nil {
			return component.WrapError(err, component.OperationSync, kind, "syncing snapshot lease %s", name)
		}
		logger.V(1).Info("Synced snapshot lease", "name", name, "result", result)
	}
	return nil
}

// TriggerDelete deletes both leases.
func (o *operator) TriggerDelete(ctx context.Context, etcd *druidv1alpha1.Etcd) error {
	return component.WrapError(component.DeleteIgnoringNotFound(ctx, o.client, emptyLeases(etcd)...),
		component.OperationDelete, kind, "deleting snapshot leases")
}

// GetExistingResourceNames returns the names of the snapshot leases that exist.
func (o *operator) GetExistingResourceNames(ctx context.Context, etcd *druidv1alpha1.Etcd) ([]string, error) {
	names, err := component.ExistingNames(ctx, o.client, emptyLeases(etcd)...)
	return names, component.WrapError(err, component.OperationGet, kind, "getting snapshot leases")
}
