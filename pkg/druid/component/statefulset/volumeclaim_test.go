package statefulset

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// Gardener's provider extensions write storageClass "" for the cluster's default class (etcd-events
// always): on a PVC, "" means "no class" and the claim would never be provisioned dynamically, so the
// claim template leaves the class unset then, as upstream etcd-druid does.
func TestEmptyStorageClassLeavesTheClaimsClassUnset(t *testing.T) {
	for _, tc := range []struct {
		storageClass *string
		want         *string
	}{
		{nil, nil},
		{ptr.To(""), nil},
		{ptr.To("gardener.cloud-fast"), ptr.To("gardener.cloud-fast")},
	} {
		etcd := &druidv1alpha1.Etcd{Spec: druidv1alpha1.EtcdSpec{StorageClass: tc.storageClass, StorageCapacity: ptr.To(resource.MustParse("10Gi"))}}
		etcd.Name = "etcd-events"
		got := volumeClaimTemplate(etcd).Spec.StorageClassName
		if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
			t.Errorf("storageClass %v: claim template class %v, want %v", ptr.Deref(tc.storageClass, "<nil>"), ptr.Deref(got, "<nil>"), ptr.Deref(tc.want, "<nil>"))
		}
	}
}
