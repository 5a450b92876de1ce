package operation

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
)

// RemoveOperationAnnotation acknowledges gardenlet's request after a successful operation; gardenlet waits for
// the annotation to disappear before it considers the object reconciled, migrated or restored. It removes the
// annotation only while it still asks for value (the operation that was run), and only on the version of the
// object the runner wrote last (optimistic lock): a request gardenlet made meanwhile (say `migrate` after
// `reconcile`) makes the patch conflict, and the object is reconciled again instead of the request being
// acknowledged without being run.
func RemoveOperationAnnotation(ctx context.Context, c client.Client, obj client.Object, value string) error {
	if value == "" || OperationOf(obj) != value {
		return nil
	}
	patch := client.MergeFromWithOptions(obj.DeepCopyObject().(client.Object), client.MergeFromWithOptimisticLock{})
	annotations := obj.GetAnnotations()
	delete(annotations, extensionsv1alpha1.OperationAnnotation)
	obj.SetAnnotations(annotations)
	if err := c.Patch(ctx, obj, patch); err != nil {
		return fmt.Errorf("removing the operation annotation: %w", err)
	}
	return nil
}
