package health

import (
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// RecordedClusterSize is the cluster size druid recorded last: the StatefulSet's ClusterSizeAnnotation.
// A StatefulSet without it (created by upstream etcd-druid, by a druid that kept the size in the Etcd's
// status — upstream's CRD prunes that field —, or recreated by the adoption) gets the size derived from the
// member leases: the number of members, below the StatefulSet's replicas, whose sidecar has renewed its
// lease (holderIdentity set), i.e. the members known to have run in the cluster. No reported member (a
// cluster still bootstrapping, or no StatefulSet) gives 0: spec.replicas then (ClusterSizeForQuorum), as
// all members of a new cluster bootstrap together.
//
// Why the derivation counts members that ran and not the StatefulSet's replicas: a size larger than the
// real cluster makes a healthy cluster look quorum-lost ("1 of 3 members" during a 1 → 3 scale-up), and a
// quorum loss is what steers druid towards the recovery that deletes member volumes. A member that ran
// and is down now still holds its lease's holderIdentity and counts, so a real quorum loss is still seen.
func RecordedClusterSize(etcd *druidv1alpha1.Etcd, sts *appsv1.StatefulSet, leases []coordinationv1.Lease) int32 {
	if sts == nil {
		return 0
	}
	if size, ok := druidv1alpha1.AnnotatedClusterSize(sts.Annotations); ok {
		return size
	}
	replicas := int(ptr.Deref(sts.Spec.Replicas, 1))
	var ran int32
	for _, l := range leases {
		ordinal, ok := druidv1alpha1.OrdinalOf(etcd, l.Name)
		if ok && ordinal < replicas && ptr.Deref(l.Spec.HolderIdentity, "") != "" {
			ran++
		}
	}
	return ran
}

// ClusterSizeMarker is the StatefulSet annotation that records size, or nil when the StatefulSet
// already says so (or does not exist, or size is unknown).
func ClusterSizeMarker(sts *appsv1.StatefulSet, size int32) map[string]string {
	if sts == nil || size <= 0 {
		return nil
	}
	value := strconv.Itoa(int(size))
	if sts.Annotations[druidv1alpha1.ClusterSizeAnnotation] == value {
		return nil
	}
	return map[string]string{druidv1alpha1.ClusterSizeAnnotation: value}
}
