package validation

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// validateScheduling checks the scheduling constraints druid copies into the pod template, by the rules
// the apiserver applies to a pod (which it would apply only when druid writes the StatefulSet, failing
// every reconcile): topology spread constraints completely, affinity terms where a mistake is easy (label
// selectors, topology keys, weights, node selector operators).
func validateScheduling(c *druidv1alpha1.SchedulingConstraints, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	spread := fld.Child("topologySpreadConstraints")
	for i, t := range c.TopologySpreadConstraints {
		errs = append(errs, validateSpreadConstraint(&t, spread.Index(i))...)
	}
	errs = append(errs, validateDistinctSpreadConstraints(c.TopologySpreadConstraints, spread)...)
	if a := c.Affinity; a != nil {
		errs = append(errs, validateAffinity(a, fld.Child("affinity"))...)
	}
	errs = append(errs, validateTolerations(c.Tolerations, fld.Child("tolerations"))...)
	return errs
}

// validateDistinctSpreadConstraints refuses two spread constraints with the same identity (topologyKey,
// whenUnsatisfiable), as the apiserver does for a pod. The error names the list and the identity, not an
// index: an update judges it by the number of repeats (spreadDuplicatesGrew), so a stored duplicate does
// not look new when an item is inserted before it.
func validateDistinctSpreadConstraints(constraints []corev1.TopologySpreadConstraint, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	for identity, count := range spreadIdentityCounts(constraints) {
		for range count - 1 {
			errs = append(errs, field.Duplicate(fld, identity).WithOrigin(originDistinctSpreadConstraint))
		}
	}
	sort.Slice(errs, func(i, j int) bool { return errs[i].BadValue.(string) < errs[j].BadValue.(string) })
	return errs
}

// spreadIdentityCounts counts the spread constraints per identity ("{topologyKey, whenUnsatisfiable}").
func spreadIdentityCounts(constraints []corev1.TopologySpreadConstraint) map[string]int {
	counts := map[string]int{}
	for _, t := range constraints {
		counts[fmt.Sprintf("{%s, %s}", t.TopologyKey, t.WhenUnsatisfiable)]++
	}
	return counts
}

// spreadDuplicatesGrew judges a duplicate spread constraint of an Etcd update (see Ratchet's judges): it
// stands only when the update repeats its identity more often than the stored object did.
func spreadDuplicatesGrew(e *field.Error, newObj, oldObj any) (worse, applies bool) {
	newEtcd, ok1 := newObj.(*druidv1alpha1.Etcd)
	oldEtcd, ok2 := oldObj.(*druidv1alpha1.Etcd)
	identity, ok3 := e.BadValue.(string)
	if !ok1 || !ok2 || !ok3 {
		return false, false
	}
	newCount := spreadIdentityCounts(newEtcd.Spec.SchedulingConstraints.TopologySpreadConstraints)[identity]
	oldCount := spreadIdentityCounts(oldEtcd.Spec.SchedulingConstraints.TopologySpreadConstraints)[identity]
	return newCount > oldCount, true
}

func validateSpreadConstraint(t *corev1.TopologySpreadConstraint, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	if t.MaxSkew < 1 {
		errs = append(errs, field.Invalid(fld.Child("maxSkew"), t.MaxSkew, "must be at least 1"))
	}
	errs = append(errs, validateTopologyKey(t.TopologyKey, fld.Child("topologyKey"))...)
	errs = append(errs, validateEnum(t.WhenUnsatisfiable, fld.Child("whenUnsatisfiable"), corev1.DoNotSchedule, corev1.ScheduleAnyway)...)
	if t.MinDomains != nil {
		if *t.MinDomains < 1 {
			errs = append(errs, field.Invalid(fld.Child("minDomains"), *t.MinDomains, "must be at least 1"))
		} else if t.WhenUnsatisfiable != corev1.DoNotSchedule {
			errs = append(errs, field.Invalid(fld.Child("minDomains"), *t.MinDomains, "may only be set with whenUnsatisfiable: DoNotSchedule"))
		}
	}
	if t.NodeAffinityPolicy != nil {
		errs = append(errs, validateEnum(*t.NodeAffinityPolicy, fld.Child("nodeAffinityPolicy"), corev1.NodeInclusionPolicyHonor, corev1.NodeInclusionPolicyIgnore)...)
	}
	if t.NodeTaintsPolicy != nil {
		errs = append(errs, validateEnum(*t.NodeTaintsPolicy, fld.Child("nodeTaintsPolicy"), corev1.NodeInclusionPolicyHonor, corev1.NodeInclusionPolicyIgnore)...)
	}
	errs = append(errs, validateSelector(t.LabelSelector, fld.Child("labelSelector"))...)
	for i, key := range t.MatchLabelKeys {
		for _, msg := range utilvalidation.IsQualifiedName(key) {
			errs = append(errs, field.Invalid(fld.Child("matchLabelKeys").Index(i), key, msg))
		}
	}
	return errs
}

func validateAffinity(a *corev1.Affinity, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	if n := a.NodeAffinity; n != nil {
		nodeFld := fld.Child("nodeAffinity")
		if r := n.RequiredDuringSchedulingIgnoredDuringExecution; r != nil {
			termsFld := nodeFld.Child("requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
			if len(r.NodeSelectorTerms) == 0 {
				errs = append(errs, field.Required(termsFld, "at least one term: an empty list matches no node"))
			}
			for i := range r.NodeSelectorTerms {
				errs = append(errs, validateNodeSelectorTerm(&r.NodeSelectorTerms[i], termsFld.Index(i))...)
			}
		}
		for i, p := range n.PreferredDuringSchedulingIgnoredDuringExecution {
			at := nodeFld.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i)
			errs = append(errs, validateWeight(p.Weight, at.Child("weight"))...)
			errs = append(errs, validateNodeSelectorTerm(&p.Preference, at.Child("preference"))...)
		}
	}
	podTerms := func(required []corev1.PodAffinityTerm, preferred []corev1.WeightedPodAffinityTerm, at *field.Path) {
		for i := range required {
			errs = append(errs, validatePodAffinityTerm(&required[i], at.Child("requiredDuringSchedulingIgnoredDuringExecution").Index(i))...)
		}
		for i := range preferred {
			p := at.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i)
			errs = append(errs, validateWeight(preferred[i].Weight, p.Child("weight"))...)
			errs = append(errs, validatePodAffinityTerm(&preferred[i].PodAffinityTerm, p.Child("podAffinityTerm"))...)
		}
	}
	if p := a.PodAffinity; p != nil {
		podTerms(p.RequiredDuringSchedulingIgnoredDuringExecution, p.PreferredDuringSchedulingIgnoredDuringExecution, fld.Child("podAffinity"))
	}
	if p := a.PodAntiAffinity; p != nil {
		podTerms(p.RequiredDuringSchedulingIgnoredDuringExecution, p.PreferredDuringSchedulingIgnoredDuringExecution, fld.Child("podAntiAffinity"))
	}
	return errs
}

func validateNodeSelectorTerm(term *corev1.NodeSelectorTerm, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, r := range term.MatchExpressions {
		at := fld.Child("matchExpressions").Index(i)
		for _, msg := range utilvalidation.IsQualifiedName(r.Key) {
			errs = append(errs, field.Invalid(at.Child("key"), r.Key, msg))
		}
		errs = append(errs, validateNodeSelectorOperator(r, at)...)
	}
	for i, r := range term.MatchFields {
		at := fld.Child("matchFields").Index(i)
		if r.Key != "metadata.name" {
			errs = append(errs, field.NotSupported(at.Child("key"), r.Key, []string{"metadata.name"}))
		}
		errs = append(errs, validateNodeSelectorOperator(r, at)...)
	}
	return errs
}

func validateNodeSelectorOperator(r corev1.NodeSelectorRequirement, fld *field.Path) field.ErrorList {
	switch r.Operator {
	case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
		if len(r.Values) == 0 {
			return field.ErrorList{field.Required(fld.Child("values"), "must be given for In and NotIn")}
		}
	case corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
		if len(r.Values) > 0 {
			return field.ErrorList{field.Forbidden(fld.Child("values"), "may not be given for Exists and DoesNotExist")}
		}
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if len(r.Values) != 1 {
			return field.ErrorList{field.Required(fld.Child("values"), "must be exactly one integer for Gt and Lt")}
		}
	default:
		return field.ErrorList{field.NotSupported(fld.Child("operator"), r.Operator, []string{"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"})}
	}
	return nil
}

func validatePodAffinityTerm(term *corev1.PodAffinityTerm, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateTopologyKey(term.TopologyKey, fld.Child("topologyKey"))...)
	errs = append(errs, validateSelector(term.LabelSelector, fld.Child("labelSelector"))...)
	errs = append(errs, validateSelector(term.NamespaceSelector, fld.Child("namespaceSelector"))...)
	for i, ns := range term.Namespaces {
		for _, msg := range utilvalidation.IsDNS1123Label(ns) {
			errs = append(errs, field.Invalid(fld.Child("namespaces").Index(i), ns, msg))
		}
	}
	return errs
}

func validateTopologyKey(key string, fld *field.Path) field.ErrorList {
	if key == "" {
		return field.ErrorList{field.Required(fld, "a node label such as topology.kubernetes.io/zone or kubernetes.io/hostname")}
	}
	var errs field.ErrorList
	for _, msg := range utilvalidation.IsQualifiedName(key) {
		errs = append(errs, field.Invalid(fld, key, msg))
	}
	return errs
}

func validateWeight(weight int32, fld *field.Path) field.ErrorList {
	if weight < 1 || weight > 100 {
		return field.ErrorList{field.Invalid(fld, weight, "must be from 1 to 100")}
	}
	return nil
}

func validateSelector(s *metav1.LabelSelector, fld *field.Path) field.ErrorList {
	if s == nil {
		return nil
	}
	return metav1validation.ValidateLabelSelector(s, metav1validation.LabelSelectorValidationOptions{}, fld)
}
