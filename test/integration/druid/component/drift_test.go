package component_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
)

// A template edited behind druid's back is restored; a spec change is rolled out once and then left alone.
func TestStatefulSetRestoresDriftAndRollsSpecChangesOnce(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.CreateNamespace(t)
	etcd := createEtcd(t, ns, 3)
	registry, counter := newRegistry(t)
	op := registry.Get(component.KindStatefulSet)
	g.Expect(op.Sync(ctx, etcd)).To(Succeed())

	sts := get(t, ns, "etcd-main", &appsv1.StatefulSet{}).(*appsv1.StatefulSet)
	sts.Spec.Template.Spec.Containers[0].Image = "example.org/hand-edited:v0"
	g.Expect(env.Client.Update(ctx, sts)).To(Succeed())
	g.Expect(op.Sync(ctx, etcd)).To(Succeed())
	sts = get(t, ns, "etcd-main", &appsv1.StatefulSet{}).(*appsv1.StatefulSet)
	g.Expect(container(g, sts, "etcd").Image).To(Equal(testImages.EtcdWrapper))

	etcd = updateEtcd(t, etcd, func(e *druidv1alpha1.Etcd) { e.Spec.Annotations = map[string]string{"rolled": "yes"} })
	g.Expect(op.Sync(ctx, etcd)).To(Succeed())
	sts = get(t, ns, "etcd-main", &appsv1.StatefulSet{}).(*appsv1.StatefulSet)
	g.Expect(sts.Spec.Template.Annotations).To(HaveKeyWithValue("rolled", "yes"))

	counter.writes.Store(0)
	g.Expect(op.Sync(ctx, etcd)).To(Succeed())
	g.Expect(counter.writes.Load()).To(BeZero())
	g.Expect(get(t, ns, "etcd-main", &appsv1.StatefulSet{}).GetResourceVersion()).To(Equal(sts.ResourceVersion))
}

func TestPDBForSingleNodeAllowsEviction(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.CreateNamespace(t)
	etcd := createEtcd(t, ns, 1)
	registry, _ := newRegistry(t)
	op := registry.Get(component.KindPodDisruptionBudget)
	g.Expect(op.Sync(ctx, etcd)).To(Succeed())
	pdb := get(t, ns, "etcd-main", &policyv1.PodDisruptionBudget{}).(*policyv1.PodDisruptionBudget)
	g.Expect(pdb.Spec.MinAvailable).To(Equal(ptr.To(intstr.FromInt32(0))))
	g.Expect(pdb.Spec.UnhealthyPodEvictionPolicy).To(BeNil(), "AlwaysAllow only with the Etcd annotation")

	etcd = updateEtcd(t, etcd, func(e *druidv1alpha1.Etcd) { e.Spec.Replicas = 5 })
	g.Expect(op.Sync(ctx, etcd)).To(Succeed())
	pdb = get(t, ns, "etcd-main", &policyv1.PodDisruptionBudget{}).(*policyv1.PodDisruptionBudget)
	g.Expect(pdb.Spec.MinAvailable).To(Equal(ptr.To(intstr.FromInt32(3))))
}
