package component

import (
	"context"
	"maps"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

func TestPodSelectorFollowsTheStatefulSet(t *testing.T) {
	ctx := context.Background()
	etcd := &druidv1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: "ns"}}
	reconciled := etcd.DeepCopy()
	reconciled.Status.ObservedGeneration = ptr.To(int64(1))
	sts := func(selector map[string]string, deleting bool) client.Object {
		s := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: "ns"},
			Spec: appsv1.StatefulSetSpec{Selector: &metav1.LabelSelector{MatchLabels: selector}}}
		if deleting {
			s.DeletionTimestamp, s.Finalizers = ptr.To(metav1.Now()), []string{metav1.FinalizerOrphanDependents}
		}
		return s
	}
	empty := fake.NewClientBuilder().Build()
	withLegacy := fake.NewClientBuilder().WithObjects(sts(LegacySelector(etcd), false)).Build()
	for _, tc := range []struct {
		name    string
		clients Clients
		etcd    *druidv1alpha1.Etcd
		want    map[string]string
	}{
		{"no StatefulSet", Clients{Client: empty, Live: empty}, reconciled, druidv1alpha1.ManagedLabels(etcd)},
		{"druid's selector", Uncached(fake.NewClientBuilder().WithObjects(sts(druidv1alpha1.ManagedLabels(etcd), false)).Build()), reconciled, druidv1alpha1.ManagedLabels(etcd)},
		{"the old selector, found in the cache", Uncached(withLegacy), reconciled, LegacySelector(etcd)},
		{"the old selector, found only by the live read", Clients{Client: empty, Live: withLegacy}, reconciled, LegacySelector(etcd)},
		{"no live read for an Etcd nobody reconciled", Clients{Client: empty, Live: withLegacy}, etcd, druidv1alpha1.ManagedLabels(etcd)},
		{"being deleted by the adoption", Uncached(fake.NewClientBuilder().WithObjects(sts(LegacySelector(etcd), true)).Build()), reconciled, druidv1alpha1.ManagedLabels(etcd)},
	} {
		got, err := PodSelector(ctx, tc.clients, tc.etcd)
		if err != nil || !maps.Equal(got, tc.want) {
			t.Errorf("%s: PodSelector = %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
}
