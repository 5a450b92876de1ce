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

// Deploy writes one VPA per Etcd, targeting its StatefulSet: the etcd container scaled from the class's
// floor (requests only), backup-restore left alone. Destroy deletes it.
func TestDeployWritesAVPAPerEtcdAndDestroyDeletesIt(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	s := newShoot(t)
	g.Expect(etcd.New(env.Client, s.namespace, s.mainValues()).Deploy(ctx)).To(Succeed())
	g.Expect(etcd.New(env.Client, s.namespace, values(etcd.RoleEvents)).Deploy(ctx)).To(Succeed())

	for role, minMemory := range map[string]string{"main": "300M", "events": "60M"} {
		vpa := getVPA(g, s.namespace, "etcd-"+role)
		g.Expect(vpa.Labels).To(HaveKeyWithValue("role", "etcd-vpa-"+role))
		g.Expect(vpa.Spec.TargetRef).To(Equal(&autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "etcd-" + role}))
		g.Expect(vpa.Spec.UpdatePolicy.UpdateMode).To(Equal(ptr.To(vpaautoscalingv1.UpdateModeRecreate)))
		policies := vpa.Spec.ResourcePolicy.ContainerPolicies
		g.Expect(policies).To(HaveLen(2))
		g.Expect(policies[0].ContainerName).To(Equal("etcd"))
		g.Expect(policies[0].Mode).To(Equal(ptr.To(vpaautoscalingv1.ContainerScalingModeAuto)))
		g.Expect(policies[0].ControlledValues).To(Equal(ptr.To(vpaautoscalingv1.ContainerControlledValuesRequestsOnly)))
		g.Expect(policies[0].MinAllowed).To(BeComparableTo(requests("memory", minMemory)), role)
		g.Expect(policies[1].ContainerName).To(Equal("backup-restore"))
		g.Expect(policies[1].Mode).To(Equal(ptr.To(vpaautoscalingv1.ContainerScalingModeOff)))
		g.Expect(policies[1].ControlledValues).To(Equal(ptr.To(vpaautoscalingv1.ContainerControlledValuesRequestsOnly)))
		g.Expect(policies[1].MinAllowed).To(BeEmpty())
		// The etcd container starts above the VPA's floor (Gardener's requests by class).
		g.Expect(getEtcd(g, s.namespace, "etcd-"+role).Spec.Etcd.Resources.Requests.Memory().Cmp(policies[0].MinAllowed[corev1.ResourceMemory])).To(Equal(1))
	}

	// A changed VPA is put back by the next Deploy.
	vpa := getVPA(g, s.namespace, "etcd-events")
	vpa.Spec.UpdatePolicy.UpdateMode = ptr.To(vpaautoscalingv1.UpdateModeOff)
	g.Expect(env.Client.Update(ctx, vpa)).To(Succeed())
	g.Expect(etcd.New(env.Client, s.namespace, values(etcd.RoleEvents)).Deploy(ctx)).To(Succeed())
	g.Expect(getVPA(g, s.namespace, "etcd-events").Spec.UpdatePolicy.UpdateMode).To(Equal(ptr.To(vpaautoscalingv1.UpdateModeRecreate)))

	events := etcd.New(env.Client, s.namespace, values(etcd.RoleEvents))
	g.Expect(events.Destroy(ctx)).To(Succeed())
	err := env.Client.Get(ctx, client.ObjectKey{Namespace: s.namespace, Name: "etcd-events"}, &vpaautoscalingv1.VerticalPodAutoscaler{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "got %v", err)
	g.Expect(events.Destroy(ctx)).To(Succeed(), "a second Destroy finds nothing to delete")
	getVPA(g, s.namespace, "etcd-main")
}
