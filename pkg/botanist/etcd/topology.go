package etcd

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// FailureToleranceType is Gardener's failure tolerance of a highly available control plane.
type FailureToleranceType string

const (
	// FailureToleranceTypeNode tolerates the loss of a node: the members run on different nodes.
	FailureToleranceTypeNode FailureToleranceType = "node"
	// FailureToleranceTypeZone tolerates the loss of a zone: the members run in different zones.
	FailureToleranceTypeZone FailureToleranceType = "zone"
)

// hostSpreadDomains is how many nodes a member set spreads over at least when a failure tolerance is set:
// the three members of a highly available etcd.
const hostSpreadDomains = 3

// spreadConstraints are the spread constraints to write: those of topologySpreadConstraints for a new
// Etcd or one that runs a single member, and the existing ones (none included) for an Etcd that already
// runs several. Its members' volumes pin them to nodes (and zones) that may not satisfy a hard spread
// rule added now: the first member the change rolls would stay Pending for good, leaving the cluster a
// member short. Changing the spread of a running multi-member Etcd is left to the operator.
func spreadConstraints(existing, etcd *druidv1alpha1.Etcd, replicas, zones int32, ftt FailureToleranceType) []corev1.TopologySpreadConstraint {
	if existing != nil && existing.Spec.Replicas > 1 {
		return existing.Spec.SchedulingConstraints.TopologySpreadConstraints
	}
	return topologySpreadConstraints(etcd, replicas, zones, ftt)
}

// topologySpreadConstraints spreads the members of a multi-member etcd the way Gardener spreads the pods of
// its highly available control planes (druid copies spec.schedulingConstraints into the pod template):
//   - nothing for a single member;
//   - over nodes (kubernetes.io/hostname, maxSkew 1): DoNotSchedule with minDomains min(3, replicas) when a
//     failure tolerance type is set (node or zone), else ScheduleAnyway — a best effort for a cluster
//     scaled out without high availability;
//   - over zones (topology.kubernetes.io/zone, maxSkew 1, DoNotSchedule, minDomains min(zones, replicas))
//     when the seed has more than one zone and the failure tolerance is zone or unset; a node failure
//     tolerance keeps the members in one zone (Gardener pins such control planes to a zone).
//
// The selector is the druid-managed labels of this Etcd's pods, which no other Etcd's pods carry.
func topologySpreadConstraints(etcd *druidv1alpha1.Etcd, replicas, zones int32, ftt FailureToleranceType) []corev1.TopologySpreadConstraint {
	if replicas <= 1 {
		return nil
	}
	selector := metav1.LabelSelector{MatchLabels: druidv1alpha1.ManagedLabels(etcd)}
	host := corev1.TopologySpreadConstraint{
		MaxSkew:           1,
		TopologyKey:       corev1.LabelHostname,
		WhenUnsatisfiable: corev1.ScheduleAnyway,
		LabelSelector:     selector.DeepCopy(),
	}
	if ftt != "" {
		host.WhenUnsatisfiable = corev1.DoNotSchedule
		host.MinDomains = ptr.To(min(hostSpreadDomains, replicas))
	}
	out := []corev1.TopologySpreadConstraint{host}
	if zones > 1 && (ftt == "" || ftt == FailureToleranceTypeZone) {
		out = append(out, corev1.TopologySpreadConstraint{
			MaxSkew:           1,
			TopologyKey:       corev1.LabelTopologyZone,
			WhenUnsatisfiable: corev1.DoNotSchedule,
			MinDomains:        ptr.To(min(zones, replicas)),
			LabelSelector:     selector.DeepCopy(),
		})
	}
	return out
}
