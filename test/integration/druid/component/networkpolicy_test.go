package component_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
)

// TestNetworkPolicyLetsInOnlyTheNamedCallers checks the NetworkPolicy of an Etcd: owned by it, selecting its
// pods, limiting ingress only, and admitting per port exactly the callers of the design — the client port
// from the members and pods labelled with Gardener's access label for the client Service, the peer port from
// the members, the backup-restore port from the members, labelled pods of the Etcd's namespace and of druid's
// namespace (the default of config.BackupPortAccess), pods there with Gardener's to-all-shoots label
// (gardenlet's) and druid's pods in druid's namespace only (by our chart's label or by the one of
// gardenlet's druid Deployment) — never from
// every namespace; nothing else (the wrapper port has no rule). A custom port follows the spec; deleting the Etcd's objects removes it.
func TestNetworkPolicyLetsInOnlyTheNamedCallers(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := env.CreateNamespace(t)
	etcd := createEtcd(t, ns, 3, func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.ClientPort = ptr.To(int32(3379)) })
	registry, _ := newRegistry(t)
	g.Expect(registry.SyncAll(ctx, etcd)).To(Succeed())

	policy := get(t, ns, "etcd-main", &networkingv1.NetworkPolicy{}).(*networkingv1.NetworkPolicy)
	expectManaged(g, policy, etcd, "etcd-network-policy")
	members := map[string]string{"app.kubernetes.io/managed-by": "etcd-druid", "app.kubernetes.io/part-of": "etcd-main"}
	g.Expect(policy.Spec.PodSelector).To(Equal(metav1.LabelSelector{MatchLabels: members}))
	g.Expect(policy.Spec.PolicyTypes).To(Equal([]networkingv1.PolicyType{networkingv1.PolicyTypeIngress}), "egress stays open: the store and the apiserver")

	tcp := func(port int32) []networkingv1.NetworkPolicyPort {
		return []networkingv1.NetworkPolicyPort{{Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(intstr.FromInt32(port))}}
	}
	druidNamespace := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
		Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpIn, Values: []string{testBackupPortAccess.DruidNamespace}}}}
	fromMembers := networkingv1.NetworkPolicyPeer{PodSelector: &metav1.LabelSelector{MatchLabels: members}}
	labelled := func(port string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchLabels: map[string]string{"networking.resources.gardener.cloud/to-etcd-main-client-tcp-" + port: "allowed"}}
	}
	g.Expect(policy.Spec.Ingress).To(ConsistOf(
		networkingv1.NetworkPolicyIngressRule{Ports: tcp(3379), From: []networkingv1.NetworkPolicyPeer{fromMembers, {PodSelector: labelled("3379")}}},
		networkingv1.NetworkPolicyIngressRule{Ports: tcp(2380), From: []networkingv1.NetworkPolicyPeer{fromMembers}},
		networkingv1.NetworkPolicyIngressRule{Ports: tcp(8080), From: []networkingv1.NetworkPolicyPeer{fromMembers,
			{PodSelector: labelled("8080")},
			{PodSelector: labelled("8080"), NamespaceSelector: druidNamespace},
			// gardenlet's label for the final snapshot call
			{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"networking.resources.gardener.cloud/to-all-shoots-etcd-main-client-tcp-8080": "allowed"}},
				NamespaceSelector: druidNamespace},
			// druid asks for a full snapshot beyond triggerFullSnapshotThreshold
			{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": "etcd-druid"}}, NamespaceSelector: druidNamespace},
			// the same, when gardenlet deploys druid
			{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"gardener.cloud/role": "etcd-druid"}}, NamespaceSelector: druidNamespace}}},
	))

	g.Expect(registry.Get(component.KindNetworkPolicy).TriggerDelete(ctx, etcd)).To(Succeed())
	err := env.Client.Get(ctx, client.ObjectKeyFromObject(policy), &networkingv1.NetworkPolicy{})
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "deleted, got %v", err)
}
