package etcd_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	vpaautoscalingv1 "k8s.io/autoscaler/vertical-pod-autoscaler/pkg/apis/autoscaling.k8s.io/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
)

func getVPA(g Gomega, namespace, name string) *vpaautoscalingv1.VerticalPodAutoscaler {
	vpa := &vpaautoscalingv1.VerticalPodAutoscaler{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, vpa)).To(Succeed())
	return vpa
}

// Deploy writes one VPA per Etcd as gardenlet does, targeting the Etcd (its scale subresource): the etcd
// container scaled from the class's floor (requests only), every other container left alone, evictions
// to scale down only in the maintenance window. Destroy deletes it.
func TestDeployWritesAVPAPerEtcdAndDestroyDeletesIt(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	s := newShoot(t)
	g.Expect(etcd.New(env.Client, s.namespace, s.mainValues()).Deploy(ctx)).To(Succeed())
	g.Expect(etcd.New(env.Client, s.namespace, values(etcd.RoleEvents)).Deploy(ctx)).To(Succeed())

	for role, minMemory := range map[string]string{"main": "300M", "events": "60M"} {
		vpa := getVPA(g, s.namespace, "etcd-"+role)
		g.Expect(vpa.Labels).To(HaveKeyWithValue("role", "etcd-vpa-"+role))
		g.Expect(vpa.Labels).To(HaveKeyWithValue("autoscaling.gardener.cloud/eviction-requirements", "managed-by-controller"))
		g.Expect(vpa.Annotations).To(HaveKeyWithValue("eviction-requirements.autoscaling.gardener.cloud/downscale-restriction", "in-maintenance-window-only"))
		g.Expect(vpa.Annotations).To(HaveKeyWithValue("shoot.gardener.cloud/maintenance-window", "220000+0000,230000+0000"))
		g.Expect(vpa.Spec.TargetRef).To(Equal(&autoscalingv1.CrossVersionObjectReference{APIVersion: "druid.gardener.cloud/v1alpha1", Kind: "Etcd", Name: "etcd-" + role}))
		g.Expect(vpa.Spec.UpdatePolicy.UpdateMode).To(Equal(ptr.To(vpaautoscalingv1.UpdateModeInPlaceOrRecreate)))
		policies := vpa.Spec.ResourcePolicy.ContainerPolicies
		g.Expect(policies).To(HaveLen(2))
		g.Expect(policies[0].ContainerName).To(Equal("etcd"))
		g.Expect(policies[0].Mode).To(Equal(ptr.To(vpaautoscalingv1.ContainerScalingModeAuto)))
		g.Expect(policies[0].ControlledValues).To(Equal(ptr.To(vpaautoscalingv1.ContainerControlledValuesRequestsOnly)))
		g.Expect(policies[0].MinAllowed).To(BeComparableTo(requests("memory", minMemory)), role)
		g.Expect(policies[1]).To(Equal(vpaautoscalingv1.ContainerResourcePolicy{ContainerName: "*", Mode: ptr.To(vpaautoscalingv1.ContainerScalingModeOff)}))
		// The etcd container starts above the VPA's floor (Gardener's requests by class).
		g.Expect(getEtcd(g, s.namespace, "etcd-"+role).Spec.Etcd.Resources.Requests.Memory().Cmp(policies[0].MinAllowed[corev1.ResourceMemory])).To(Equal(1))
	}

	// A changed VPA is put back by the next Deploy.
	vpa := getVPA(g, s.namespace, "etcd-events")
	vpa.Spec.UpdatePolicy.UpdateMode = ptr.To(vpaautoscalingv1.UpdateModeOff)
	g.Expect(env.Client.Update(ctx, vpa)).To(Succeed())
	g.Expect(etcd.New(env.Client, s.namespace, values(etcd.RoleEvents)).Deploy(ctx)).To(Succeed())
	g.Expect(getVPA(g, s.namespace, "etcd-events").Spec.UpdatePolicy.UpdateMode).To(Equal(ptr.To(vpaautoscalingv1.UpdateModeInPlaceOrRecreate)))

	events := etcd.New(env.Client, s.namespace, values(etcd.RoleEvents))
	g.Expect(events.Destroy(ctx)).To(Succeed())
	err := env.Client.Get(ctx, client.ObjectKey{Namespace: s.namespace, Name: "etcd-events"}, &vpaautoscalingv1.VerticalPodAutoscaler{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "got %v", err)
	g.Expect(events.Destroy(ctx)).To(Succeed(), "a second Destroy finds nothing to delete")
	getVPA(g, s.namespace, "etcd-main")
}

// The important etcd of a production (or infrastructure) shoot, and any etcd of a shoot whose scale-down is
// disabled, is never evicted to scale down; a floor from the shoot replaces the class's, and the Etcd's
// requests follow it up.
func TestDeployWritesTheVPAsEvictionRequirementAndFloorFromTheShoot(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	s := newShoot(t)
	v := s.mainValues()
	v.Purpose = etcd.PurposeProduction
	v.MinAllowed = requests("memory", "2Gi")
	g.Expect(etcd.New(env.Client, s.namespace, v).Deploy(ctx)).To(Succeed())
	vpa := getVPA(g, s.namespace, "etcd-main")
	g.Expect(vpa.Labels).To(HaveKeyWithValue("autoscaling.gardener.cloud/eviction-requirements", "managed-by-controller"))
	g.Expect(vpa.Annotations).To(HaveKeyWithValue("eviction-requirements.autoscaling.gardener.cloud/downscale-restriction", "never"))
	g.Expect(vpa.Annotations).NotTo(HaveKey("shoot.gardener.cloud/maintenance-window"))
	g.Expect(vpa.Spec.ResourcePolicy.ContainerPolicies[0].MinAllowed).To(BeComparableTo(requests("memory", "2Gi")))
	g.Expect(getEtcd(g, s.namespace, "etcd-main").Spec.Etcd.Resources.Requests).To(BeComparableTo(requests("cpu", "150m", "memory", "2Gi")))

	// etcd-events of the same production shoot is class normal: maintenance window only ...
	events := values(etcd.RoleEvents)
	events.Purpose = etcd.PurposeProduction
	g.Expect(etcd.New(env.Client, s.namespace, events).Deploy(ctx)).To(Succeed())
	g.Expect(getVPA(g, s.namespace, "etcd-events").Annotations).To(HaveKeyWithValue("eviction-requirements.autoscaling.gardener.cloud/downscale-restriction", "in-maintenance-window-only"))
	// ... unless the shoot disables scale-down.
	events.ScaleDownDisabled = true
	g.Expect(etcd.New(env.Client, s.namespace, events).Deploy(ctx)).To(Succeed())
	vpa = getVPA(g, s.namespace, "etcd-events")
	g.Expect(vpa.Annotations).To(HaveKeyWithValue("eviction-requirements.autoscaling.gardener.cloud/downscale-restriction", "never"))
	g.Expect(vpa.Annotations).NotTo(HaveKey("shoot.gardener.cloud/maintenance-window"))
}
