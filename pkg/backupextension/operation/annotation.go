package operation

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
)

// RemoveReconcileAnnotation acknowledges gardenlet's request after a successful operation; gardenlet waits for
// the annotation to disappear before it considers the object reconciled.
func RemoveReconcileAnnotation(ctx context.Context, c client.Client, obj client.Object) error {
	if !HasReconcileAnnotation(obj) {
		return nil
	}
	patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
	annotations := obj.GetAnnotations()
	delete(annotations, extensionsv1alpha1.OperationAnnotation)
	obj.SetAnnotations(annotations)
	if err := c.Patch(ctx, obj, patch); err != nil {
		return fmt.Errorf("removing the operation annotation: %w", err)
	}
	return nil
}
