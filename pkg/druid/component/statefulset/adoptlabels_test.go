package statefulset

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
)

// Adoption labels only the pods the upstream StatefulSet controls (by UID): a stranger's pod that carries
// the legacy selector labels under a member's name — no owner, or another controller — must not be
// promoted to a member by druid itself.
func TestAdoptPodLabelsOnlyOfTheStatefulSetsPods(t *testing.T) {
	etcd := newEtcd()
	sts := existing(etcd, component.LegacySelector(etcd))
	sts.UID = "sts-uid"
	pod := func(name string, owner types.UID) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: etcd.Namespace, Labels: component.LegacySelector(etcd)}}
		if owner != "" {
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: sts.Name, UID: owner, Controller: ptr.To(true)}}
		}
		return p
	}
	c := fake.NewClientBuilder().WithObjects(sts,
		pod(druidv1alpha1.PodName(etcd, 0), sts.UID), pod(druidv1alpha1.PodName(etcd, 1), ""), pod(druidv1alpha1.PodName(etcd, 2), "forged-uid")).Build()
	o := &operator{client: component.Clients{Client: c, Live: c}}

	adopted, err := o.AdoptPodLabels(context.Background(), etcd, sts)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(adopted, []string{druidv1alpha1.PodName(etcd, 0)}) {
		t.Errorf("adopted %v, want only %s, the StatefulSet's pod", adopted, druidv1alpha1.PodName(etcd, 0))
	}
	for _, name := range []string{druidv1alpha1.PodName(etcd, 1), druidv1alpha1.PodName(etcd, 2)} {
		p := &corev1.Pod{}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: etcd.Namespace, Name: name}, p); err != nil {
			t.Fatal(err)
		}
		if _, labelled := p.Labels[druidv1alpha1.LabelPartOfKey]; labelled {
			t.Errorf("pod %s got druid's member labels: %v", name, p.Labels)
		}
	}
}
