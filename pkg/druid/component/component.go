// Package component defines the contract between druid's Etcd controller and the objects it manages for
// an Etcd (as upstream etcd-druid names them): every managed object is one Operator in its own package,
// and the controller runs them in the reference's sync order. Keeping each object behind the same three
// calls lets the spec flow, the deletion flow and the protection webhook treat all of them alike.
package component

import (
	"context"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// Operator manages one kind of object for an Etcd. Implementations are stateless apart from their client
// and configuration, so one instance serves every Etcd.
//
// Callers pass an Etcd that has been defaulted (druidv1alpha1.SetDefaults on a deep copy): operators rely
// on ports, quotas and other documented defaults being set and never write defaults back to the Etcd.
type Operator interface {
	// Sync creates or patches the object(s) so that they match the Etcd's spec. It is idempotent: a second
	// Sync without spec changes writes nothing. It returns an *Error on failure, or a *RequeueError when a
	// precondition is not met yet and the Sync is retried later without recording a failure.
	Sync(ctx context.Context, etcd *druidv1alpha1.Etcd) error
	// TriggerDelete asks the apiserver to delete the object(s); it does not wait for them to disappear
	// (the deletion flow polls GetExistingResourceNames). Objects that are already gone are not an error.
	TriggerDelete(ctx context.Context, etcd *druidv1alpha1.Etcd) error
	// GetExistingResourceNames lists the names of the objects of this kind that exist for the Etcd, so that
	// the deletion flow can wait until everything is gone and the status can report what is there.
	GetExistingResourceNames(ctx context.Context, etcd *druidv1alpha1.Etcd) ([]string, error)
}
