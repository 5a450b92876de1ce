package component

import (
	"maps"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// OwnerReference is the controller reference every managed object carries: the garbage collector removes
// the objects with their Etcd, and blockOwnerDeletion keeps a foreground deletion of the Etcd waiting until
// they are gone.
func OwnerReference(etcd *druidv1alpha1.Etcd) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion:         druidv1alpha1.SchemeGroupVersion.String(),
		Kind:               "Etcd",
		Name:               etcd.Name,
		UID:                etcd.UID,
		Controller:         ptr.To(true),
		BlockOwnerDeletion: ptr.To(true),
	}
}

// ApplyManagedMeta sets the reference labels of a managed object (managed-by, part-of, component, name) and
// the owner reference on obj, keeping any other label, annotation or owner that someone else added. Every
// operator calls it inside its CreateOrPatch mutate function, so labels removed by hand come back.
func ApplyManagedMeta(obj metav1.Object, etcd *druidv1alpha1.Etcd, componentName string) {
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, druidv1alpha1.ComponentLabels(etcd, componentName, NameLabelValue(obj.GetName())))
	obj.SetLabels(labels)
	obj.SetOwnerReferences(withOwner(obj.GetOwnerReferences(), OwnerReference(etcd)))
}

// NameLabelValue is the app.kubernetes.io/name value of an object: its name, with the colons of RBAC names
// (druid.gardener.cloud:etcd:<n>) replaced by dashes, because label values cannot contain colons.
func NameLabelValue(objectName string) string {
	return strings.ReplaceAll(objectName, ":", "-")
}

// withOwner replaces an existing reference to the same Etcd in place (matched by UID or, for a recreated
// Etcd, by API version, kind and name) and appends it otherwise; keeping the position keeps Sync idempotent.
// Other references stay. When another owner already controls the object (an adopted object someone else
// claimed), druid's reference is added without the controller flag, because the apiserver allows only one
// controller: the object is still removed with the Etcd only once its other owner is gone, too.
func withOwner(refs []metav1.OwnerReference, owner metav1.OwnerReference) []metav1.OwnerReference {
	for i, ref := range refs {
		if ref.UID == owner.UID || (ref.Kind == owner.Kind && ref.Name == owner.Name && ref.APIVersion == owner.APIVersion) {
			out := append([]metav1.OwnerReference(nil), refs...)
			out[i] = owner
			if controlledByOther(out, i) {
				out[i].Controller = ptr.To(false)
			}
			return out
		}
	}
	if controlledByOther(refs, -1) {
		owner.Controller = ptr.To(false)
	}
	return append(refs, owner)
}

// controlledByOther tells whether a reference other than refs[self] is the controller.
func controlledByOther(refs []metav1.OwnerReference, self int) bool {
	for i, ref := range refs {
		if i != self && ptr.Deref(ref.Controller, false) {
			return true
		}
	}
	return false
}
