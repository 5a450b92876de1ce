package v1alpha1

import "strconv"

// AnnotatedClusterSize is the cluster size the annotations of an Etcd's StatefulSet record
// (ClusterSizeAnnotation); false when they hold none that parses as a positive number. Druid reads it to
// compute the quorum; the Gardener side reads it to wake a hibernated cluster to the size it had.
func AnnotatedClusterSize(statefulSetAnnotations map[string]string) (int32, bool) {
	v, err := strconv.ParseInt(statefulSetAnnotations[ClusterSizeAnnotation], 10, 32)
	if err != nil || v <= 0 {
		return 0, false
	}
	return int32(v), true
}
