package component

import (
	"maps"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// JobPodLabels are the labels of the pod of a Job druid builds (compaction, copy, surviving-data): the
// extra labels first (a copy task's spec.podLabels, the store's network policy labels), then druid's own
// — managed-by=etcd-druid, the component and the Job's name — so that no extra label overrides them.
// part-of is never set: together with managed-by it is an Etcd's member selector (StatefulSet, PDB,
// client Service, NetworkPolicy), and a Job's pod must never count as a member or receive client traffic.
// Nor are instance and name, the keys of the legacy selector a StatefulSet of an older etcd-druid keeps
// (LegacySelector), which druid then selects the members with.
func JobPodLabels(componentName, jobName string, extra ...map[string]string) map[string]string {
	labels := map[string]string{}
	for _, e := range extra {
		maps.Copy(labels, e)
	}
	delete(labels, druidv1alpha1.LabelPartOfKey)
	delete(labels, druidv1alpha1.LabelLegacyInstanceKey)
	delete(labels, druidv1alpha1.LabelLegacyNameKey)
	labels[druidv1alpha1.LabelManagedByKey] = druidv1alpha1.LabelManagedByValue
	labels[druidv1alpha1.LabelComponentKey] = componentName
	labels[druidv1alpha1.LabelAppNameKey] = jobName
	return labels
}
