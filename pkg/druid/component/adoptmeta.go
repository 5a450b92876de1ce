package component

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// AdoptMeta puts druid's labels and owner reference (ApplyManagedMeta) on obj as the apiserver stores it,
// patching only metadata, so that nothing restarts. It reads from c.Live: an object an upstream etcd-druid
// left without druid's labels is not in druid's cache. It reports whether it patched; an object that does
// not exist is no error.
func AdoptMeta(ctx context.Context, c Clients, obj client.Object, etcd *druidv1alpha1.Etcd, componentName string) (bool, error) {
	if err := c.Live.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	base := obj.DeepCopyObject().(client.Object)
	ApplyManagedMeta(obj, etcd, componentName)
	if equality.Semantic.DeepEqual(base.GetLabels(), obj.GetLabels()) && equality.Semantic.DeepEqual(base.GetOwnerReferences(), obj.GetOwnerReferences()) {
		return false, nil
	}
	if err := c.Client.Patch(ctx, obj, client.MergeFrom(base)); err != nil {
		return false, fmt.Errorf("labelling %s: %w", obj.GetName(), err)
	}
	return true, nil
}

// LabelAdopter is the part of an operator that labels the objects an upstream etcd-druid (before v0.22)
// left with its own `instance`/`name` labels only, so that druid's cache, which selects on the managed-by
// label, sees them. It returns the names of the objects it labelled.
type LabelAdopter interface {
	AdoptLabels(ctx context.Context, etcd *druidv1alpha1.Etcd) ([]string, error)
}
