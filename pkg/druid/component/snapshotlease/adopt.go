package snapshotlease

import (
	"context"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
)

var _ component.LabelAdopter = &operator{}

// AdoptLabels labels both snapshot leases where they exist.
func (o *operator) AdoptLabels(ctx context.Context, etcd *druidv1alpha1.Etcd) ([]string, error) {
	var adopted []string
	for _, lease := range emptyLeases(etcd) {
		patched, err := component.AdoptMeta(ctx, o.client, lease, etcd, druidv1alpha1.ComponentSnapshotLease)
		if err != nil {
			return adopted, component.WrapError(err, component.OperationSync, kind, "adopting snapshot lease %s", lease.GetName())
		}
		if patched {
			adopted = append(adopted, lease.GetName())
		}
	}
	return adopted, nil
}
