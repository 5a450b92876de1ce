package charts_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	vpaautoscalingv1 "k8s.io/autoscaler/vertical-pod-autoscaler/pkg/apis/autoscaling.k8s.io/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-etcd/gardener-etcd/pkg/localseed"
)

// The local seed installs the VPA API at every start: over an apiserver that has it already (envtest
// installs the same CRDs, as a restarted seed finds them) it updates them, and VPAs can be stored.
func TestLocalSeedInstallsTheVPAAPIAgain(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	g.Expect(localseed.InstallVPACRDs(ctx, env.Config)).To(Succeed())
	g.Expect(localseed.InstallVPACRDs(ctx, env.Config)).To(Succeed())
	for _, name := range []string{"verticalpodautoscalers.autoscaling.k8s.io", "verticalpodautoscalercheckpoints.autoscaling.k8s.io"} {
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: name}, &apiextensionsv1.CustomResourceDefinition{})).To(Succeed())
	}
	ns := env.CreateNamespace(t)
	vpa := &vpaautoscalingv1.VerticalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: ns},
		Spec: vpaautoscalingv1.VerticalPodAutoscalerSpec{TargetRef: &autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "etcd-main"}}}
	g.Expect(env.Client.Create(ctx, vpa)).To(Succeed())
}
