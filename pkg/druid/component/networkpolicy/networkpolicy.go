// Package networkpolicy manages the NetworkPolicy `<n>` that says who may reach an Etcd's pods: the sidecar
// and the wrapper serve state-changing endpoints and etcd holds the cluster's data. Only ingress is limited;
// the members need egress to the apiserver and the backup store.
//
// What it guarantees: once it exists, the members are isolated for ingress, and the callers below are
// admitted. NetworkPolicies are additive, though — a connection is allowed when any policy selecting the
// pod allows it — so it is no upper bound on who else may connect: in a Gardener seed the resource manager
// writes further allow policies from the client Service's annotations (e.g. for scrape targets), and
// anyone who may write NetworkPolicies in the Etcd's namespace can add one. It bounds access only in
// namespaces where nobody else does.
//
// Who it admits, per port (Gardener's convention: a client pod carries
// `networking.resources.gardener.cloud/to-<service>-tcp-<port>: allowed` for each Service port it needs in
// its own namespace, and `networking.resources.gardener.cloud/to-all-shoots-<service>-tcp-<port>: allowed`
// for a Service of any shoot namespace):
//   - client port: the kube-apiserver (and other clients) of the Etcd's namespace labelled for
//     `<n>-client` on that port, and the members themselves (the sidecars manage the membership through it);
//   - peer port: the members only;
//   - backup-restore port: the members (a follower forwards snapshot requests to the backup leader), pods
//     labelled for `<n>-client` on that port in the Etcd's namespace and in the namespaces druid's
//     configuration names (config.BackupPortAccess; by default druid's own), pods labelled to-all-shoots
//     for it in those namespaces and in druid's (gardenlet, beside druid, asks for the final snapshot with
//     that label), and druid's pods (app.kubernetes.io/name=etcd-druid, its chart's label, or
//     gardener.cloud/role=etcd-druid, the label of the Deployment gardenlet writes for druid) in druid's
//     namespace only (the compaction controller asks for a full snapshot beyond
//     triggerFullSnapshotThreshold, druid before hibernation and image changes, EtcdOpsTasks). Namespaces
//     are selected by kubernetes.io/metadata.name, which the apiserver sets and no tenant can forge, and no
//     peer of ours selects every namespace. This list is the only authentication of a snapshot trigger:
//     our sidecar serves /snapshot/full (also final) and /snapshot/delta without a client certificate, as
//     gardenlet calls them, and Gardener's released sidecar image serves its initialization and snapshot
//     endpoints without authentication. What other policies admit to this port is outside druid's hands.
//
// The wrapper's port is reached over loopback only and gets no rule.
package networkpolicy

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
)

// LabelValueAllowed is the value of Gardener's network labels that grants access.
const LabelValueAllowed = "allowed"

// NamespaceNameLabel is the label the apiserver sets on every namespace to its name.
const NamespaceNameLabel = corev1.LabelMetadataName

// DruidPodLabels select druid's own pods (the selector label of the etcd-druid chart), in druid's namespace.
var DruidPodLabels = map[string]string{"app.kubernetes.io/name": "etcd-druid"}

// GardenletDruidPodLabels select druid's pods when gardenlet deploys druid: its Deployment labels them
// with nothing else (Gardener's pkg/component/etcd/etcd/bootstrap.go), and their to-all-shoots label names
// etcd-main only, so without this selector druid's snapshot requests to etcd-events would be dropped.
var GardenletDruidPodLabels = map[string]string{"gardener.cloud/role": "etcd-druid"}

// AccessLabel is Gardener's pod label that grants access to TCP port of the Service serviceName in the
// pod's own namespace (`networking.resources.gardener.cloud/to-<service>-tcp-<port>`).
func AccessLabel(serviceName string, port int32) string {
	return fmt.Sprintf("networking.resources.gardener.cloud/to-%s-tcp-%d", serviceName, port)
}

// AllShootsAccessLabel is Gardener's pod label that grants access to TCP port of the Service serviceName in
// every shoot namespace (`networking.resources.gardener.cloud/to-all-shoots-<service>-tcp-<port>`, the
// resource manager's namespace alias all-shoots); gardenlet carries it for etcd-main's backup port.
func AllShootsAccessLabel(serviceName string, port int32) string {
	return fmt.Sprintf("networking.resources.gardener.cloud/to-all-shoots-%s-tcp-%d", serviceName, port)
}

// New returns the NetworkPolicy operator; access names the namespaces admitted to the backup-restore port.
func New(c component.Clients, access config.BackupPortAccess) component.Operator {
	return &component.SingleObject[*networkingv1.NetworkPolicy]{
		Client:    c,
		Kind:      component.KindNetworkPolicy,
		Component: druidv1alpha1.ComponentNetworkPolicy,
		Empty: func(etcd *druidv1alpha1.Etcd) *networkingv1.NetworkPolicy {
			return &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: druidv1alpha1.NetworkPolicyName(etcd), Namespace: etcd.Namespace}}
		},
		Desired: func(ctx context.Context, etcd *druidv1alpha1.Etcd, policy *networkingv1.NetworkPolicy) error {
			pods, err := component.PodSelector(ctx, c, etcd)
			policy.Spec = desiredSpec(etcd, pods, access)
			return err
		},
	}
}

func desiredSpec(etcd *druidv1alpha1.Etcd, pods map[string]string, access config.BackupPortAccess) networkingv1.NetworkPolicySpec {
	clientPort, peerPort, backupPort := *etcd.Spec.Etcd.ClientPort, *etcd.Spec.Etcd.ServerPort, *etcd.Spec.Backup.Port
	members := networkingv1.NetworkPolicyPeer{PodSelector: &metav1.LabelSelector{MatchLabels: pods}}
	labelledFor := func(label func(string, int32) string, port int32) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchLabels: map[string]string{label(druidv1alpha1.ClientServiceName(etcd), port): LabelValueAllowed}}
	}
	return networkingv1.NetworkPolicySpec{
		PodSelector: metav1.LabelSelector{MatchLabels: pods},
		PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
		Ingress: []networkingv1.NetworkPolicyIngressRule{
			{
				Ports: tcp(clientPort),
				From:  []networkingv1.NetworkPolicyPeer{members, {PodSelector: labelledFor(AccessLabel, clientPort)}},
			},
			{
				Ports: tcp(peerPort),
				From:  []networkingv1.NetworkPolicyPeer{members},
			},
			{
				Ports: tcp(backupPort),
				From:  backupPortPeers(etcd, members, labelledFor(AccessLabel, backupPort), labelledFor(AllShootsAccessLabel, backupPort), access),
			},
		},
	}
}

// backupPortPeers are the members, the labelled pods of the Etcd's namespace and of the other configured
// namespaces, the pods labelled for all shoots in the configured namespaces and druid's, and druid's pods
// in druid's namespace.
func backupPortPeers(etcd *druidv1alpha1.Etcd, members networkingv1.NetworkPolicyPeer, labelled, labelledForAllShoots *metav1.LabelSelector,
	access config.BackupPortAccess) []networkingv1.NetworkPolicyPeer {
	peers := []networkingv1.NetworkPolicyPeer{members, {PodSelector: labelled}}
	var others []string
	for _, ns := range access.Namespaces() {
		if ns != etcd.Namespace {
			others = append(others, ns)
		}
	}
	if len(others) > 0 {
		peers = append(peers, networkingv1.NetworkPolicyPeer{PodSelector: labelled, NamespaceSelector: namespacesNamed(others...)})
	}
	allShoots := others
	if access.DruidNamespace != "" {
		allShoots = append(slices.Clone(others), access.DruidNamespace)
	}
	slices.Sort(allShoots)
	if allShoots = slices.Compact(allShoots); len(allShoots) > 0 {
		peers = append(peers, networkingv1.NetworkPolicyPeer{PodSelector: labelledForAllShoots, NamespaceSelector: namespacesNamed(allShoots...)})
	}
	if access.DruidNamespace != "" {
		for _, labels := range []map[string]string{DruidPodLabels, GardenletDruidPodLabels} {
			peers = append(peers, networkingv1.NetworkPolicyPeer{
				PodSelector: &metav1.LabelSelector{MatchLabels: labels}, NamespaceSelector: namespacesNamed(access.DruidNamespace)})
		}
	}
	return peers
}

// namespacesNamed selects namespaces by the name label the apiserver sets.
func namespacesNamed(names ...string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
		Key: NamespaceNameLabel, Operator: metav1.LabelSelectorOpIn, Values: names}}}
}

func tcp(port int32) []networkingv1.NetworkPolicyPort {
	return []networkingv1.NetworkPolicyPort{{Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(intstr.FromInt32(port))}}
}
