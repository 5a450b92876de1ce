package decide

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Placement is what the apiserver stores about a relocation candidate's volume and pod, read by the heal
// action when Decide names the candidate (KindRelocateMember, KindRelocationHeld).
type Placement struct {
	// Claim is the member's data claim (nil: none).
	Claim *corev1.PersistentVolumeClaim
	// Volume is the PersistentVolume the claim is bound to (nil: unbound, or not found).
	Volume *corev1.PersistentVolume
	// Pod is the member's pod (nil: none).
	Pod *corev1.Pod
	// Nodes are all Nodes of the cluster.
	Nodes []corev1.Node
	// Now and UnreachableGrace judge unreachable nodes: a node counts as lost once it has been NotReady
	// with the node.kubernetes.io/unreachable taint for UnreachableGrace.
	Now              time.Time
	UnreachableGrace time.Duration
}

// Verdict is JudgeRelocation's answer.
type Verdict struct {
	// Unreachable: the member's volume can be mounted on no node that is there; the member cannot come back
	// with it.
	Unreachable bool
	// ForceDeletePod: the pod is bound to a lost node, whose kubelet will never confirm its deletion; it
	// must be deleted without a grace period, or the StatefulSet never creates its replacement.
	ForceDeletePod bool
	// Why says what was found, for logs, events and the condition.
	Why string
}

// JudgeRelocation decides on what the apiserver stores whether a candidate's volume is unreachable. Only a
// volume with required node affinity can be: its affinity must match no Node that exists, or only Nodes
// that are lost (NotReady with the unreachable taint for longer than the grace period). A volume that
// can be attached anywhere, an unbound or terminating claim (a relocation under way), a volume that is
// not found (nothing to judge it on) or a node affinity druid does not understand keep the data: not
// unreachable. So does a pod that sits on a node that is there: its member is case 9's to restart.
func JudgeRelocation(p Placement) Verdict {
	switch {
	case p.Claim == nil:
		return Verdict{Why: "no claim: the StatefulSet creates one with the next pod"}
	case p.Claim.DeletionTimestamp != nil:
		return Verdict{Why: fmt.Sprintf("claim %s is being deleted", p.Claim.Name)}
	case p.Claim.Spec.VolumeName == "" || p.Volume == nil:
		return Verdict{Why: fmt.Sprintf("claim %s is not bound to a volume", p.Claim.Name)}
	}
	affinity := p.Volume.Spec.NodeAffinity
	if affinity == nil || affinity.Required == nil || len(affinity.Required.NodeSelectorTerms) == 0 {
		return Verdict{Why: fmt.Sprintf("volume %s is not bound to nodes", p.Volume.Name)}
	}
	var lost []string
	for i := range p.Nodes {
		node := &p.Nodes[i]
		matches, understood := matchesNodeSelector(node, affinity.Required)
		if !understood {
			return Verdict{Why: fmt.Sprintf("volume %s has a node affinity druid does not judge", p.Volume.Name)}
		}
		if !matches {
			continue
		}
		if since, ok := unreachableSince(node); !ok || p.Now.Sub(since) < p.UnreachableGrace {
			return Verdict{Why: fmt.Sprintf("volume %s can be attached on node %s, which is there", p.Volume.Name, node.Name)}
		}
		lost = append(lost, node.Name)
	}
	why := fmt.Sprintf("volume %s of claim %s is bound to nodes with %s, of which none exists", p.Volume.Name, p.Claim.Name, describeSelector(affinity.Required))
	if len(lost) > 0 {
		why = fmt.Sprintf("volume %s of claim %s is bound to nodes with %s, of which only %s exist, unreachable for longer than %s",
			p.Volume.Name, p.Claim.Name, describeSelector(affinity.Required), strings.Join(lost, ", "), p.UnreachableGrace)
	}
	v := Verdict{Unreachable: true, Why: why}
	if p.Pod != nil && p.Pod.Spec.NodeName != "" {
		node := p.Pod.Spec.NodeName
		if found := slices.IndexFunc(p.Nodes, func(n corev1.Node) bool { return n.Name == node }); found >= 0 && !slices.Contains(lost, node) {
			return Verdict{Why: fmt.Sprintf("pod %s is on node %s, which is there", p.Pod.Name, node)}
		}
		v.ForceDeletePod = true
	}
	return v
}

// unreachableSince is when the node became unreachable: NotReady (Unknown or False) with the
// node.kubernetes.io/unreachable taint, since the taint was added (or, without its time, since the Ready
// condition changed). ok is false for a node that is not unreachable.
func unreachableSince(node *corev1.Node) (time.Time, bool) {
	var ready *corev1.NodeCondition
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == corev1.NodeReady {
			ready = &node.Status.Conditions[i]
		}
	}
	if ready == nil || ready.Status == corev1.ConditionTrue {
		return time.Time{}, false
	}
	for _, taint := range node.Spec.Taints {
		if taint.Key == corev1.TaintNodeUnreachable {
			if taint.TimeAdded != nil {
				return taint.TimeAdded.Time, true
			}
			return ready.LastTransitionTime.Time, true
		}
	}
	return time.Time{}, false
}

// matchesNodeSelector evaluates a required node selector (terms ORed, requirements ANDed) on node.
// understood is false for operators other than In, NotIn, Exists and DoesNotExist on labels and In, NotIn
// on metadata.name: druid then does not judge the volume.
func matchesNodeSelector(node *corev1.Node, selector *corev1.NodeSelector) (matches, understood bool) {
	for _, term := range selector.NodeSelectorTerms {
		if len(term.MatchExpressions) == 0 && len(term.MatchFields) == 0 {
			continue // an empty term matches nothing
		}
		all := true
		for _, r := range term.MatchExpressions {
			value, has := node.Labels[r.Key]
			ok, known := requirementHolds(r, value, has)
			if !known {
				return false, false
			}
			all = all && ok
		}
		for _, r := range term.MatchFields {
			if r.Key != "metadata.name" || (r.Operator != corev1.NodeSelectorOpIn && r.Operator != corev1.NodeSelectorOpNotIn) {
				return false, false
			}
			ok, _ := requirementHolds(r, node.Name, true)
			all = all && ok
		}
		if all {
			return true, true
		}
	}
	return false, true
}

func requirementHolds(r corev1.NodeSelectorRequirement, value string, has bool) (holds, known bool) {
	switch r.Operator {
	case corev1.NodeSelectorOpIn:
		return has && slices.Contains(r.Values, value), true
	case corev1.NodeSelectorOpNotIn:
		return !has || !slices.Contains(r.Values, value), true
	case corev1.NodeSelectorOpExists:
		return has, true
	case corev1.NodeSelectorOpDoesNotExist:
		return !has, true
	}
	return false, false
}

// describeSelector renders a node selector for a message: "kubernetes.io/hostname In [node-c]", terms
// joined by " or ".
func describeSelector(selector *corev1.NodeSelector) string {
	terms := make([]string, 0, len(selector.NodeSelectorTerms))
	for _, term := range selector.NodeSelectorTerms {
		var reqs []string
		for _, r := range append(append([]corev1.NodeSelectorRequirement{}, term.MatchExpressions...), term.MatchFields...) {
			reqs = append(reqs, strings.TrimSpace(fmt.Sprintf("%s %s %s", r.Key, r.Operator, strings.Join(r.Values, ","))))
		}
		terms = append(terms, strings.Join(reqs, " and "))
	}
	return strings.Join(terms, " or ")
}
