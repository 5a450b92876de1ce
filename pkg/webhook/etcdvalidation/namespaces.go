package etcdvalidation

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/secretref"
)

// foreignSecretRefs rejects secret references of an Etcd that point into another namespace: druid mounts
// and reads what an Etcd references, so a reference into a foreign namespace would let whoever may write
// Etcds in one namespace read (and pin with druid's finalizer) Secrets of any other. old is nil on CREATE;
// on UPDATE a reference that already pointed elsewhere and did not change is let through, so that objects
// stored before this rule stay updatable (validation ratchets: it judges only what changed).
func foreignSecretRefs(etcd, old *druidv1alpha1.Etcd) field.ErrorList {
	unchanged := map[string]string{}
	if old != nil {
		for _, ref := range secretref.Of(old) {
			unchanged[ref.Field] = ref.Key()
		}
	}
	var errs field.ErrorList
	for _, ref := range secretref.Of(etcd) {
		if ref.Namespace == etcd.Namespace || unchanged[ref.Field] == ref.Key() {
			continue
		}
		errs = append(errs, foreignNamespace(fieldPath(ref.Field).Child("namespace"), ref.Namespace, etcd.Namespace))
	}
	return errs
}

// foreignCopyTaskSecretRefs is foreignSecretRefs for the two stores of an EtcdCopyBackupsTask.
func foreignCopyTaskSecretRefs(task, old *druidv1alpha1.EtcdCopyBackupsTask) field.ErrorList {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	check := func(ref, oldRef *corev1.SecretReference, fld *field.Path) {
		if ref == nil || ref.Namespace == "" || ref.Namespace == task.Namespace {
			return
		}
		if oldRef != nil && *oldRef == *ref {
			return
		}
		errs = append(errs, foreignNamespace(fld.Child("secretRef", "namespace"), ref.Namespace, task.Namespace))
	}
	var oldSource, oldTarget *corev1.SecretReference
	if old != nil {
		oldSource, oldTarget = old.Spec.SourceStore.SecretRef, old.Spec.TargetStore.SecretRef
	}
	check(task.Spec.SourceStore.SecretRef, oldSource, spec.Child("sourceStore"))
	check(task.Spec.TargetStore.SecretRef, oldTarget, spec.Child("targetStore"))
	return errs
}

func foreignNamespace(fld *field.Path, namespace, own string) *field.Error {
	return field.Invalid(fld, namespace, fmt.Sprintf(
		"secrets must live in the object's own namespace %q: leave the namespace empty or set it to %q", own, own))
}

// fieldPath turns a dotted spec path of secretref (e.g. spec.backup.store.secretRef) into a field.Path.
func fieldPath(dotted string) *field.Path {
	parts := strings.Split(dotted, ".")
	return field.NewPath(parts[0], parts[1:]...)
}
