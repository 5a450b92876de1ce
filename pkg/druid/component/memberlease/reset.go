package memberlease

import (
	"context"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
)

// Healer is the part of the member Lease operator that the heal flow uses, so that member leases have one
// writer: dropping the leases of members that are gone (scale-down, superfluous members) and starting
// every member over (quorum-loss recovery).
type Healer interface {
	// DeleteMembers deletes the named member leases; leases already gone are no error.
	DeleteMembers(ctx context.Context, etcd *druidv1alpha1.Etcd, names []string) error
	// Reset deletes every member lease of the Etcd and creates those of the ordinals below replicas again,
	// empty: no holder, no renewal, so that no member counts as bootstrapped until its sidecar renews it.
	// It returns the created leases.
	Reset(ctx context.Context, etcd *druidv1alpha1.Etcd, replicas int32) ([]coordinationv1.Lease, error)
}

var _ Healer = &operator{}

func (o *operator) DeleteMembers(ctx context.Context, etcd *druidv1alpha1.Etcd, names []string) error {
	for _, name := range names {
		lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: etcd.Namespace}}
		if err := component.DeleteIgnoringNotFound(ctx, o.client, lease); err != nil {
			return component.WrapError(err, component.OperationDelete, kind, "deleting member lease %s", name)
		}
		log.FromContext(ctx).V(1).Info("Deleted member lease", "member", name)
	}
	return nil
}

func (o *operator) Reset(ctx context.Context, etcd *druidv1alpha1.Etcd, replicas int32) ([]coordinationv1.Lease, error) {
	if err := o.client.DeleteAllOf(ctx, &coordinationv1.Lease{}, client.InNamespace(etcd.Namespace), Selector(etcd)); err != nil {
		return nil, component.WrapError(err, component.OperationDelete, kind, "deleting the member leases")
	}
	leases := make([]coordinationv1.Lease, 0, replicas)
	for i := 0; i < int(replicas); i++ {
		lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: druidv1alpha1.MemberLeaseName(etcd, i), Namespace: etcd.Namespace}}
		component.ApplyManagedMeta(lease, etcd, druidv1alpha1.ComponentMemberLease)
		if err := o.client.Create(ctx, lease); err != nil {
			return nil, component.WrapError(err, component.OperationSync, kind, "creating member lease %s", lease.Name)
		}
		leases = append(leases, *lease)
	}
	return leases, nil
}
