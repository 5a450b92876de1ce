//go:build e2e

package e2e

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/seedworkflow"
)

// Member identity: a pod labelled as a member of etcd-main in its namespace, created by someone other than
// the StatefulSet controller, is refused — directly, or through a Deployment whose template carries the
// member labels — so the PodDisruptionBudget's allowed disruptions and the client Service's endpoints stay
// those of the three members.
var _ = Describe("member identity", func() {
	It("keeps a pod labelled as a member out of the PDB and the client Service", func(ctx SpecContext) {
		env := newShoot(ctx, "identity", 0)
		deployMain(ctx, env, 3)
		obj := getEtcd(ctx, env, etcd.RoleMain)
		image := env.Seed.Images()["etcd-wrapper"]

		var disruptionsAllowed int32
		Eventually(func(g Gomega) {
			pdb := &policyv1.PodDisruptionBudget{}
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: env.Namespace, Name: druidv1alpha1.PDBName(obj)}, pdb)).To(Succeed())
			g.Expect(pdb.Status.ObservedGeneration).To(Equal(pdb.Generation))
			g.Expect(pdb.Status.CurrentHealthy).To(Equal(int32(3)))
			disruptionsAllowed = pdb.Status.DisruptionsAllowed
		}).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(Succeed())
		endpoints := clientEndpoints(ctx, env, obj)
		Expect(endpoints).To(HaveLen(3))

		By("creating a pod with the member labels as a user other than druid")
		stranger := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "not-a-member", Namespace: env.Namespace, Labels: druidv1alpha1.ManagedLabels(obj)},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: image}}},
		}
		err := env.Client.Create(ctx, stranger)
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "refused, got %v", err)
		Expect(err.Error()).To(And(ContainSubstring("metadata.labels"), ContainSubstring("member of Etcd "+env.Namespace+"/"+obj.Name)))

		By("creating a Deployment whose pod template carries the member labels")
		labels := druidv1alpha1.ManagedLabels(obj)
		labels["e2e"] = "not-a-member"
		deploy := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "not-a-member", Namespace: env.Namespace},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To(int32(1)),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"e2e": "not-a-member"}},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: image}}}},
			},
		}
		Expect(env.Client.Create(ctx, deploy)).To(Succeed())
		// The ReplicaSet controller tried and was refused: its ReplicaSet reports the webhook's message.
		Eventually(func(g Gomega) {
			sets := &appsv1.ReplicaSetList{}
			g.Expect(env.Client.List(ctx, sets, client.InNamespace(env.Namespace), client.MatchingLabels{"e2e": "not-a-member"})).To(Succeed())
			g.Expect(sets.Items).To(HaveLen(1))
			var failure *appsv1.ReplicaSetCondition
			for i := range sets.Items[0].Status.Conditions {
				if c := &sets.Items[0].Status.Conditions[i]; c.Type == appsv1.ReplicaSetReplicaFailure {
					failure = c
				}
			}
			g.Expect(failure).NotTo(BeNil())
			g.Expect(failure.Message).To(ContainSubstring("member of Etcd " + env.Namespace + "/" + obj.Name))
		}).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(Succeed())
		pods := &corev1.PodList{}
		Expect(env.Client.List(ctx, pods, client.InNamespace(env.Namespace), client.MatchingLabels{"e2e": "not-a-member"})).To(Succeed())
		Expect(pods.Items).To(BeEmpty())

		By("the PDB and the client Service still count the three members only")
		pdb := &policyv1.PodDisruptionBudget{}
		Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: env.Namespace, Name: druidv1alpha1.PDBName(obj)}, pdb)).To(Succeed())
		Expect(pdb.Status.CurrentHealthy).To(Equal(int32(3)))
		Expect(pdb.Status.DisruptionsAllowed).To(Equal(disruptionsAllowed))
		Expect(clientEndpoints(ctx, env, obj)).To(ConsistOf(endpoints))
		Expect(env.Client.Delete(ctx, deploy)).To(Succeed())
	})
})

// clientEndpoints are the pod names behind the Etcd's client Service, from its EndpointSlices.
func clientEndpoints(ctx SpecContext, env *seedworkflow.Env, obj *druidv1alpha1.Etcd) []string {
	slices := &discoveryv1.EndpointSliceList{}
	Expect(env.Client.List(ctx, slices, client.InNamespace(env.Namespace),
		client.MatchingLabels{discoveryv1.LabelServiceName: druidv1alpha1.ClientServiceName(obj)})).To(Succeed())
	var names []string
	for _, s := range slices.Items {
		for _, e := range s.Endpoints {
			if e.TargetRef != nil {
				names = append(names, e.TargetRef.Name)
			}
		}
	}
	return names
}
