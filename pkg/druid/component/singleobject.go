package component

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// SingleObject is the Operator of a kind that druid manages exactly once per Etcd (a ServiceAccount, a
// Service, the ConfigMap, …). For such kinds the three calls differ only in which object it is and what it
// should look like, so a package provides just those two functions and shares the create-or-patch,
// deletion, existence and error-code handling here.
type SingleObject[T client.Object] struct {
	Client Clients
	Kind   Kind
	// Component is the object's app.kubernetes.io/component label value.
	Component string
	// Empty returns the object with only its namespace and name set.
	Empty func(etcd *druidv1alpha1.Etcd) T
	// Desired sets the desired state on obj, which holds the current object when it exists. The managed
	// labels and the owner reference are applied before it runs.
	Desired func(ctx context.Context, etcd *druidv1alpha1.Etcd, obj T) error
}

var _ Operator = &SingleObject[client.Object]{}

// Sync creates or patches the object; an unchanged object is not written.
func (o *SingleObject[T]) Sync(ctx context.Context, etcd *druidv1alpha1.Etcd) error {
	obj, result, err := CreateOrPatch(ctx, o.Client, func() T { return o.Empty(etcd) }, func(obj T) error {
		ApplyManagedMeta(obj, etcd, o.Component)
		return o.Desired(ctx, etcd, obj)
	})
	if err != nil {
		return WrapError(err, OperationSync, o.Kind, "syncing %s %s", o.Kind, obj.GetName())
	}
	log.FromContext(ctx).V(1).Info("Synced "+string(o.Kind), "etcd", client.ObjectKeyFromObject(etcd), "name", obj.GetName(), "result", result)
	return nil
}

// TriggerDelete deletes the object; one that is already gone counts as deleted.
func (o *SingleObject[T]) TriggerDelete(ctx context.Context, etcd *druidv1alpha1.Etcd) error {
	obj := o.Empty(etcd)
	return WrapError(DeleteIgnoringNotFound(ctx, o.Client, obj), OperationDelete, o.Kind, "deleting %s %s", o.Kind, obj.GetName())
}

// GetExistingResourceNames returns the object's name when it exists.
func (o *SingleObject[T]) GetExistingResourceNames(ctx context.Context, etcd *druidv1alpha1.Etcd) ([]string, error) {
	names, err := ExistingNames(ctx, o.Client, o.Empty(etcd))
	return names, WrapError(err, OperationGet, o.Kind, "getting %s", o.Kind)
}
