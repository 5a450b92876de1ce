package etcd

import (
	"context"
	"encoding/json"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/webhook/etcdvalidation"
)

// The immutability rules are CEL rules of our CRDs too, so the integration suite cannot store such a
// change; here druid's own judgement of them is checked against a StatefulSet with and without the
// recorded spec.
func TestAppliedEtcdKeepsTheImmutableFields(t *testing.T) {
	applied := &druidv1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: "ns"},
		Spec: druidv1alpha1.EtcdSpec{Labels: map[string]string{"role": "main"}, Replicas: 3, StorageCapacity: ptr.To(resource.MustParse("10Gi"))}}
	recorded, err := json.Marshal(applied.Spec)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	withRecord := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{AppliedSpecAnnotation: string(recorded)}},
		Spec: appsv1.StatefulSetSpec{VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main"}}}}}
	adopted := &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
		ObjectMeta: metav1.ObjectMeta{Name: "main-etcd"}, Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To("gold")}}}}}

	for name, tc := range map[string]struct {
		sts    *appsv1.StatefulSet
		change func(*druidv1alpha1.Etcd)
		want   []string
	}{
		"recorded, unchanged":                {withRecord, func(*druidv1alpha1.Etcd) {}, nil},
		"recorded, member name prefix added": {withRecord, func(e *druidv1alpha1.Etcd) { e.Spec.MemberNamePrefix = ptr.To("garden") }, []string{"spec.memberNamePrefix"}},
		"recorded, claim template renamed":   {withRecord, func(e *druidv1alpha1.Etcd) { e.Spec.VolumeClaimTemplate = ptr.To("data") }, []string{"spec.volumeClaimTemplate"}},
		"recorded, storage class set":        {withRecord, func(e *druidv1alpha1.Etcd) { e.Spec.StorageClass = ptr.To("fast") }, []string{"spec.storageClass"}},
		"adopted, as it runs": {adopted, func(e *druidv1alpha1.Etcd) {
			e.Spec.VolumeClaimTemplate, e.Spec.StorageClass = ptr.To("main-etcd"), ptr.To("gold")
		}, nil},
		"adopted, claim template of the Etcd": {adopted, func(e *druidv1alpha1.Etcd) { e.Spec.StorageClass = ptr.To("gold") }, []string{"spec.volumeClaimTemplate"}},
		"adopted, another storage class":      {adopted, func(e *druidv1alpha1.Etcd) { e.Spec.VolumeClaimTemplate = ptr.To("main-etcd") }, []string{"spec.storageClass"}},
		"adopted, a value create would refuse": {adopted, func(e *druidv1alpha1.Etcd) {
			e.Spec.VolumeClaimTemplate, e.Spec.StorageClass = ptr.To("main-etcd"), ptr.To("gold")
			e.Spec.Etcd.SnapshotCount = ptr.To[int64](0)
		}, nil},
		"nothing runs: judged as on create": {nil, func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.SnapshotCount = ptr.To[int64](0) }, []string{"spec.etcd.snapshotCount"}},
	} {
		t.Run(name, func(t *testing.T) {
			etcd := applied.DeepCopy()
			tc.change(etcd)
			var fields []string
			for _, e := range etcdvalidation.EtcdErrors(etcd, appliedEtcd(context.Background(), etcd, tc.sts)) {
				fields = append(fields, e.Field)
			}
			NewWithT(t).Expect(fields).To(Equal(tc.want))
		})
	}
}
