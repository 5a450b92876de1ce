package validation

import (
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/util/validation/field"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// Member identity: a pod is an Etcd's member for the PodDisruptionBudget, the client Service and the
// NetworkPolicy when it carries the Etcd's ManagedLabels (managed-by=etcd-druid, part-of=<etcd>). Labels
// that users hand to druid for the pods it builds must not be able to claim that identity.

// reservedPodLabelKeys are the label keys druid sets itself on the pods of its Jobs: the member selector's
// keys, and the component and name keys (app.kubernetes.io/name=etcd-druid is what the NetworkPolicy
// admits as druid's own pods); and the keys of the legacy member selector (instance, name), which an
// adopted StatefulSet may still select its members with.
var reservedPodLabelKeys = []string{
	druidv1alpha1.LabelManagedByKey, druidv1alpha1.LabelPartOfKey, druidv1alpha1.LabelComponentKey, druidv1alpha1.LabelAppNameKey,
	druidv1alpha1.LabelLegacyInstanceKey, druidv1alpha1.LabelLegacyNameKey,
}

// validateJobPodLabels refuses druid's own label keys in labels that druid puts onto a Job's pod (an
// EtcdCopyBackupsTask's spec.podLabels): together with the managed-by label druid sets, part-of=<etcd>
// would make the Job's pod count as a member of that Etcd.
func validateJobPodLabels(labels map[string]string, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, key := range sortedKeys(labels) {
		for _, reserved := range reservedPodLabelKeys {
			if key == reserved {
				errs = append(errs, field.Forbidden(fld.Key(key), fmt.Sprintf(
					"%s is reserved: etcd-druid sets or drops it on the Job's pod itself (%s with %s, or %s with %s, marks an Etcd's member pods)",
					key, druidv1alpha1.LabelPartOfKey, druidv1alpha1.LabelManagedByKey, druidv1alpha1.LabelLegacyInstanceKey, druidv1alpha1.LabelLegacyNameKey)))
			}
		}
	}
	return errs
}

// validateMemberLabels refuses spec.labels that give the Etcd's pods another member identity than their
// own: druid applies its ManagedLabels after spec.labels, but a different part-of or managed-by value
// states an intent (pods of another Etcd, pods not managed by druid) that druid cannot honour. A value
// equal to druid's own is accepted: Gardener writes some of these labels itself.
func validateMemberLabels(etcd *druidv1alpha1.Etcd, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	own := druidv1alpha1.ManagedLabels(etcd)
	for _, key := range sortedKeys(own) {
		if value, ok := etcd.Spec.Labels[key]; ok && value != own[key] {
			errs = append(errs, field.Invalid(fld.Key(key), value, fmt.Sprintf(
				"must be %q or left out: etcd-druid labels the Etcd's pods %s=%q, the label that makes them this Etcd's members",
				own[key], key, own[key])))
		}
	}
	return errs
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
