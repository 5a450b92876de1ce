package ensureetcd

import (
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// Mutate applies the defaults to etcd. old is the stored object on update and nil on create.
//
//   - Storage class: set on create when configured. On update the stored class is carried over when the
//     writer left the field empty (Gardener's Deploy does not know the provider's class), so an immutable
//     field never makes the update fail; a class the writer set explicitly is left for the apiserver to judge.
//   - Storage capacity: the largest of the requested, the configured and (on update) the stored capacity, so
//     volumes never shrink and a deliberately larger size survives every Deploy.
func Mutate(etcd, old *druidv1alpha1.Etcd, defaults RoleDefaults) {
	spec := &etcd.Spec
	switch {
	case old == nil && defaults.StorageClassName != "":
		spec.StorageClass = ptr.To(defaults.StorageClassName)
	case old != nil && spec.StorageClass == nil && old.Spec.StorageClass != nil:
		spec.StorageClass = ptr.To(*old.Spec.StorageClass)
	}

	capacity := spec.StorageCapacity
	raise := func(q *resource.Quantity) {
		if q != nil && (capacity == nil || q.Cmp(*capacity) > 0) {
			capacity = q
		}
	}
	raise(defaults.StorageCapacity)
	if old != nil {
		raise(old.Spec.StorageCapacity)
	}
	if capacity != nil {
		c := capacity.DeepCopy()
		spec.StorageCapacity = &c
	}
}
