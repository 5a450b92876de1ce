// Package networkpolicy manages the NetworkPolicy `<n>` that limits who may reach an Etcd's pods: the sidecar
// and the wrapper serve state-changing endpoints and etcd holds the cluster's data, so nothing in the pod
// network but the callers the design names may connect. Only ingress is limited; the members need egress to
// the apiserver and the backup store.
//
// Who may connect, per port (Gardener's convention: a client pod carries
// `networking.resources.gardener.cloud/to-<service>-tcp-<port>: allowed` for each Service port it needs):
//   - client port: the kube-apiserver (and other clients) of the Etcd's namespace labelled for
//     `<n>-client` on that port, and the members themselves (the sidecars manage the membership through it);
//   - peer port: the members only;
//   - backup-restore port: the members (a follower forwards snapshot requests to the backup leader), pods
//     of any namespace labelled for `<n>-client` on that port (the Gardener side's final snapshot, monitoring),
//     and druid's pods (app.kubernetes.io/name=etcd-druid, its chart's label; the compaction controller asks
//     for a full snapshot beyond triggerFullSnapshotThreshold); the endpoints themselves authenticate callers
//     (client certificates of the backup-restore CA).
//
// The wrapper's port is reached over loopback only and gets no rule.
package networkpolicy

import (
	"context"

	"fmt"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
)

// LabelValueAllowed is the value of Gardener's network labels that grants access.
const LabelValueAllowed = "allowed"

// DruidPodLabels select druid's own pods (the selector label of the etcd-druid chart), in any namespace.
var DruidPodLabels = map[string]string{"app.kubernetes.io/name": "etcd-druid"}

// AccessLabel is Gardener's pod label that grants access to TCP port of the Service serviceName
// (`networking.resources.gardener.cloud/to-<service>-tcp-<port>`).
func AccessLabel(serviceName string, port int32) string {
	return fmt.Sprintf("networking.resources.gardener.cloud/to-%s-tcp-%d", serviceName, port)
}

// New returns the NetworkPolicy operator.
func New(c component.Clients) component.Operator {
	return &component.SingleObject[*networkingv1.NetworkPolicy]{
		Client:    c,
		Kind:      component.KindNetworkPolicy,
		Component: druidv1alpha1.ComponentNetworkPolicy,
		Empty: func(etcd *druidv1alpha1.Etcd) *networkingv1.NetworkPolicy {
			return &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: etcd.NetworkPolicyName(), Namespace: etcd.Namespace}}
		},
		Desired: func(ctx context.Context, etcd *druidv1alpha1.Etcd, policy *networkingv1.NetworkPolicy) error {
			pods, err := component.PodSelector(ctx, c, etcd)
			policy.Spec = desiredSpec(etcd, pods)
			return err
		},
	}
}

func desiredSpec(etcd *druidv1alpha1.Etcd, pods map[string]string) networkingv1.NetworkPolicySpec {
	clientPort, peerPort, backupPort := *etcd.Spec.Etcd.ClientPort, *etcd.Spec.Etcd.ServerPort, *etcd.Spec.Backup.Port
	members := networkingv1.NetworkPolicyPeer{PodSelector: &metav1.LabelSelector{MatchLabels: pods}}
	labelledFor := func(port int32) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchLabels: map[string]string{AccessLabel(etcd.ClientServiceName(), port): LabelValueAllowed}}
	}
	return networkingv1.NetworkPolicySpec{
		PodSelector: metav1.LabelSelector{MatchLabels: pods},
		PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
		Ingress: []networkingv1.NetworkPolicyIngressRule{
			{
				Ports: tcp(clientPort),
				From:  []networkingv1.NetworkPolicyPeer{members, {PodSelector: labelledFor(clientPort)}},
			},
			{
				Ports: tcp(peerPort),
				From:  []networkingv1.NetworkPolicyPeer{members},
			},
			{
				Ports: tcp(backupPort),
				From: []networkingv1.NetworkPolicyPeer{members,
					{PodSelector: labelledFor(backupPort), NamespaceSelector: &metav1.LabelSelector{}},
					{PodSelector: &metav1.LabelSelector{MatchLabels: DruidPodLabels}, NamespaceSelector: &metav1.LabelSelector{}}},
			},
		},
	}
}

func tcp(port int32) []networkingv1.NetworkPolicyPort {
	return []networkingv1.NetworkPolicyPort{{Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(intstr.FromInt32(port))}}
}
