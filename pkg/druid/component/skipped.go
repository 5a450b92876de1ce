package component

import (
	"context"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// Skipped stands in for the operator of an optional kind that druid's role does not allow (see package
// permissions): it writes, deletes and reads nothing, so that no reconcile waits on a cache that cannot sync
// or fails on a forbidden write. The Etcd controller reports the skipped kind in a condition and an event.
type Skipped struct{}

var _ Operator = Skipped{}

// Sync does nothing.
func (Skipped) Sync(context.Context, *druidv1alpha1.Etcd) error { return nil }

// TriggerDelete does nothing: druid never created the object (its owner reference would let the garbage
// collector remove one left from a time druid was allowed to).
func (Skipped) TriggerDelete(context.Context, *druidv1alpha1.Etcd) error { return nil }

// GetExistingResourceNames reports none.
func (Skipped) GetExistingResourceNames(context.Context, *druidv1alpha1.Etcd) ([]string, error) {
	return nil, nil
}
