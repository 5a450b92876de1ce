package etcd

import (
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

func TestSpecReconcileWanted(t *testing.T) {
	etcd := func(generation int64, observed *int64, annotations map[string]string) *druidv1alpha1.Etcd {
		return &druidv1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Generation: generation, Annotations: annotations},
			Status: druidv1alpha1.EtcdStatus{ObservedGeneration: observed}}
	}
	gardenerOp := map[string]string{"gardener.cloud/operation": "reconcile"}
	druidOp := map[string]string{"druid.gardener.cloud/operation": "reconcile"}
	otherOp := map[string]string{"gardener.cloud/operation": "migrate"}
	for name, tc := range map[string]struct {
		etcd *druidv1alpha1.Etcd
		auto bool
		want bool
	}{
		"never reconciled, auto off":        {etcd: etcd(1, nil, nil), want: true},
		"reconciled, unchanged, auto off":   {etcd: etcd(1, ptr.To(int64(1)), nil)},
		"spec changed, auto off":            {etcd: etcd(2, ptr.To(int64(1)), nil)},
		"spec changed, gardener annotation": {etcd: etcd(2, ptr.To(int64(1)), gardenerOp), want: true},
		"unchanged, druid annotation":       {etcd: etcd(1, ptr.To(int64(1)), druidOp), want: true},
		"other operation value":             {etcd: etcd(2, ptr.To(int64(1)), otherOp)},
		"spec changed, auto on":             {etcd: etcd(2, ptr.To(int64(1)), nil), auto: true, want: true},
		"reconciled, unchanged, auto on":    {etcd: etcd(2, ptr.To(int64(2)), nil), auto: true},
	} {
		t.Run(name, func(t *testing.T) {
			got, _ := SpecReconcileWanted(tc.etcd, tc.auto)
			NewWithT(t).Expect(got).To(Equal(tc.want))
		})
	}
}
