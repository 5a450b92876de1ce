package validation

import (
	"fmt"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// annotationPath is metadata.annotations[key], the path an annotation's error names.
func annotationPath(key string) *field.Path {
	return field.NewPath("metadata", "annotations").Key(key)
}

// validateRestoreSource checks the restore source annotations (druidv1alpha1.RestoreSourcePrefixAnnotation
// and its target) on their own: a source in the Etcd's own store other than its own prefix, and at most
// one target, a positive revision or an RFC3339 time. They are checked on every write, never ratcheted:
// an invalid one would make the sidecar refuse to start, and removing it always passes.
func validateRestoreSource(etcd *druidv1alpha1.Etcd) field.ErrorList {
	prefix, hasPrefix := etcd.Annotations[druidv1alpha1.RestoreSourcePrefixAnnotation]
	revision, hasRevision := etcd.Annotations[druidv1alpha1.RestoreSourceRevisionAnnotation]
	at, hasTime := etcd.Annotations[druidv1alpha1.RestoreSourceTimeAnnotation]
	if !hasPrefix && !hasRevision && !hasTime {
		return nil
	}
	var errs field.ErrorList
	prefixPath := annotationPath(druidv1alpha1.RestoreSourcePrefixAnnotation)
	switch {
	case !hasPrefix:
		errs = append(errs, field.Required(prefixPath, fmt.Sprintf("%s or %s needs the source's prefix in this annotation",
			druidv1alpha1.RestoreSourceRevisionAnnotation, druidv1alpha1.RestoreSourceTimeAnnotation)))
	case prefix == "":
		errs = append(errs, field.Required(prefixPath, "the prefix of the backups to restore from, in spec.backup.store's container"))
	default:
		errs = append(errs, validateStorePrefix(prefix, prefixPath)...)
		store := etcd.Spec.Backup.Store
		switch {
		case store == nil:
			errs = append(errs, field.Invalid(prefixPath, prefix, "needs spec.backup.store: the source is read from its container with its credentials, and the new cluster backs up into it"))
		case druidv1alpha1.CleanStorePrefix(prefix) == druidv1alpha1.CleanStorePrefix(store.Prefix):
			errs = append(errs, field.Invalid(prefixPath, prefix, "is spec.backup.store.prefix, this Etcd's own (in its clean form): the source must be another cluster's backups, which the restore leaves as they are; give this Etcd a new prefix, or remove the annotation"))
		case len(errs) == 0:
			errs = append(errs, validateLocalPrefix(store.Provider, prefix, prefixPath)...)
		}
	}
	if hasRevision {
		if r, err := strconv.ParseInt(revision, 10, 64); err != nil || r <= 0 {
			errs = append(errs, field.Invalid(annotationPath(druidv1alpha1.RestoreSourceRevisionAnnotation), revision, "must be a positive revision number (decimal)"))
		}
	}
	if hasTime {
		timePath := annotationPath(druidv1alpha1.RestoreSourceTimeAnnotation)
		if _, err := time.Parse(time.RFC3339, at); err != nil {
			errs = append(errs, field.Invalid(timePath, at, "must be an RFC3339 time, e.g. 2026-11-28T14:00:00Z"))
		}
		if hasRevision {
			errs = append(errs, field.Forbidden(timePath, fmt.Sprintf("exclusive with %s: restore to a revision or to a time, not both", druidv1alpha1.RestoreSourceRevisionAnnotation)))
		}
	}
	return errs
}

// validateRestoreSourceUpdate refuses restore source annotations added or changed after creation: the
// restore happens only when a new cluster starts (a running cluster's own backups take precedence), so a
// later one would do nothing but roll the members, and would look as if it had restored. Removing them is
// allowed.
func validateRestoreSourceUpdate(newEtcd, oldEtcd *druidv1alpha1.Etcd) field.ErrorList {
	var errs field.ErrorList
	for _, key := range druidv1alpha1.RestoreSourceAnnotations {
		value, has := newEtcd.Annotations[key]
		old, had := oldEtcd.Annotations[key]
		if has && (!had || value != old) {
			errs = append(errs, field.Forbidden(annotationPath(key),
				"honoured only when the Etcd is created: a point-in-time restore goes into a NEW Etcd (gardener-etcd etcd restore-to-revision creates one); remove the annotation"))
		}
	}
	return errs
}
