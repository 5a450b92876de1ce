package component

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ExistingNames returns the names of those objs (name-only objects with namespace and name set) that exist.
// Operators managing a fixed set of objects implement GetExistingResourceNames with it.
func ExistingNames(ctx context.Context, c client.Client, objs ...client.Object) ([]string, error) {
	var names []string
	for _, obj := range objs {
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return nil, err
		}
		names = append(names, obj.GetName())
	}
	return names, nil
}

// DeleteIgnoringNotFound deletes objs; an object that is already gone counts as deleted, so TriggerDelete
// stays idempotent while the deletion flow retries.
func DeleteIgnoringNotFound(ctx context.Context, c client.Client, objs ...client.Object) error {
	for _, obj := range objs {
		if err := c.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}
