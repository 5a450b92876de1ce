package etcdops

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// networkAccessLabelPrefix begins the pod labels that Gardener's resource manager reads to let a pod reach a
// Service's port (`networking.resources.gardener.cloud/to-<service>-<protocol>-<port>: allowed`).
const networkAccessLabelPrefix = "networking.resources.gardener.cloud/to-"

// retarget points what the copied spec says about the existing Etcd's own pods at the new Etcd's pods:
//   - the members' network access labels for the existing Etcd's client Service (Gardener's etcd writes
//     them so that members reach each other's client, peer and sidecar ports): with them the new members
//     could reach the existing Etcd's members but not each other, since Gardener's resource manager opens
//     the new client Service's ports only to pods labelled for that Service;
//   - the pod selectors of the scheduling constraints that select the existing Etcd's pods by a label
//     value that is its name (druid's app.kubernetes.io/part-of): spread against those, the new members
//     would not be spread among themselves.
func retarget(newEtcd, from *druidv1alpha1.Etcd) error {
	oldAccess := networkAccessLabelPrefix + druidv1alpha1.ClientServiceName(from) + "-"
	newAccess := networkAccessLabelPrefix + druidv1alpha1.ClientServiceName(newEtcd) + "-"
	labels := make(map[string]string, len(newEtcd.Spec.Labels))
	for k, v := range newEtcd.Spec.Labels {
		if rest, ok := strings.CutPrefix(k, oldAccess); ok {
			k = newAccess + rest
			if errs := validation.IsQualifiedName(k); len(errs) > 0 {
				return fmt.Errorf("spec.labels: the network access label %s for the new Etcd's client Service would be invalid (%s): choose a shorter --name", k, strings.Join(errs, "; "))
			}
		}
		labels[k] = v
	}
	if newEtcd.Spec.Labels != nil {
		newEtcd.Spec.Labels = labels
	}
	retargetSelectors(&newEtcd.Spec.SchedulingConstraints, from.Name, newEtcd.Name)
	return nil
}

// retargetSelectors replaces the value oldName by newName in the match labels of every pod selector of
// the scheduling constraints.
func retargetSelectors(s *druidv1alpha1.SchedulingConstraints, oldName, newName string) {
	rename := func(sel *metav1.LabelSelector) {
		if sel == nil {
			return
		}
		for k, v := range sel.MatchLabels {
			if v == oldName {
				sel.MatchLabels[k] = newName
			}
		}
	}
	for i := range s.TopologySpreadConstraints {
		rename(s.TopologySpreadConstraints[i].LabelSelector)
	}
	if s.Affinity == nil {
		return
	}
	renameTerms := func(required []corev1.PodAffinityTerm, preferred []corev1.WeightedPodAffinityTerm) {
		for i := range required {
			rename(required[i].LabelSelector)
		}
		for i := range preferred {
			rename(preferred[i].PodAffinityTerm.LabelSelector)
		}
	}
	if a := s.Affinity.PodAffinity; a != nil {
		renameTerms(a.RequiredDuringSchedulingIgnoredDuringExecution, a.PreferredDuringSchedulingIgnoredDuringExecution)
	}
	if a := s.Affinity.PodAntiAffinity; a != nil {
		renameTerms(a.RequiredDuringSchedulingIgnoredDuringExecution, a.PreferredDuringSchedulingIgnoredDuringExecution)
	}
}
