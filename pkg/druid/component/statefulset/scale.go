package statefulset

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
)

// Scaler is the part of the StatefulSet operator that the heal flow uses: scaling outside the spec sync
// (the quorum-loss recovery scales to 0 and back) with a marker that changes in the same write.
type Scaler interface {
	// ScaleWithMarkers writes replicas and the annotations markers (each removed when its value is
	// empty) in one patch, guarded by sts's resourceVersion, so that the count and the markers never
	// disagree and a write based on a stale read fails with a conflict instead of undoing a newer one. sts
	// is updated with the stored object.
	ScaleWithMarkers(ctx context.Context, sts *appsv1.StatefulSet, replicas int32, markers map[string]string) error
}

var _ Scaler = &operator{}

func (o *operator) ScaleWithMarkers(ctx context.Context, sts *appsv1.StatefulSet, replicas int32, markers map[string]string) error {
	base := sts.DeepCopy()
	sts.Spec.Replicas = ptr.To(replicas)
	for key, value := range markers {
		if value == "" {
			delete(sts.Annotations, key)
		} else {
			metav1.SetMetaDataAnnotation(&sts.ObjectMeta, key, value)
		}
	}
	if err := o.client.Patch(ctx, sts, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return component.WrapError(err, component.OperationSync, kind, "scaling statefulset %s to %d (%v)", sts.Name, replicas, markers)
	}
	log.FromContext(ctx).V(1).Info("Scaled statefulset", "statefulset", sts.Name, "replicas", replicas, "markers", markers)
	return nil
}
