package backupentry

import (
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	druidvalidation "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1/validation"
	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
)

// ValidateEntry lists what makes an entry unusable: the fields Gardener's own extension validation requires
// (type, region, bucketName, secretRef), a name that does not lead to a shoot namespace (the etcd backup
// secret is written there), a bucketName that is no object name (the local provider makes it a directory),
// and a secretRef other than the entry secret gardenlet relays. The admission webhook refuses such entries
// and the controller refuses to act on one that got past it.
func ValidateEntry(be *extensionsv1alpha1.BackupEntry) field.ErrorList {
	var errs field.ErrorList
	if _, err := ShootNamespace(be.Name); err != nil {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), be.Name,
			"must be <shoot namespace>--<shoot uid>, optionally prefixed with "+SourcePrefix+", where the shoot namespace is a namespace name starting with "+ShootNamespacePrefix+": "+err.Error()))
	}
	spec := field.NewPath("spec")
	if be.Spec.Type == "" {
		errs = append(errs, field.Required(spec.Child("type"), "the provider type selects the extension"))
	}
	if be.Spec.Region == "" {
		errs = append(errs, field.Required(spec.Child("region"), "the region of the bucket"))
	}
	if be.Spec.BucketName == "" {
		errs = append(errs, field.Required(spec.Child("bucketName"), "the BackupBucket that holds this entry"))
	} else {
		for _, msg := range validation.IsDNS1123Subdomain(be.Spec.BucketName) {
			errs = append(errs, field.Invalid(spec.Child("bucketName"), be.Spec.BucketName, "must be the name of a BackupBucket: "+msg))
		}
	}
	errs = append(errs, validateSecretRefFields(be)...)
	return errs
}

// ValidateEntryUpdate lists what an update must not do: change the provider type, the region or the bucket
// (the entry's backups live in that bucket; pointing it elsewhere would orphan them, and the backup sidecar
// refuses a moved store anyway — a new bucket is a new entry), or change the spec of an entry being deleted
// (Gardener forbids that too). The create rules apply only to fields the update changes, so an entry
// stored before these rules still takes its finalizer removal and operation annotations.
func ValidateEntryUpdate(newEntry, oldEntry *extensionsv1alpha1.BackupEntry) field.ErrorList {
	spec := field.NewPath("spec")
	if newEntry.DeletionTimestamp != nil && !apiequality.Semantic.DeepEqual(newEntry.Spec, oldEntry.Spec) {
		return field.ErrorList{field.Forbidden(spec, "must not change while the entry is being deleted")}
	}
	var errs field.ErrorList
	errs = append(errs, apivalidation.ValidateImmutableField(newEntry.Spec.Type, oldEntry.Spec.Type, spec.Child("type"))...)
	errs = append(errs, apivalidation.ValidateImmutableField(newEntry.Spec.Region, oldEntry.Spec.Region, spec.Child("region"))...)
	errs = append(errs, apivalidation.ValidateImmutableField(newEntry.Spec.BucketName, oldEntry.Spec.BucketName, spec.Child("bucketName"))...)
	return append(errs, druidvalidation.Ratchet(ValidateEntry(newEntry), newEntry, oldEntry)...)
}

// validateSecretRefFields names a missing secretRef field, and otherwise checks it against the one source
// Gardener's contract allows (validateSecretRef).
func validateSecretRefFields(be *extensionsv1alpha1.BackupEntry) field.ErrorList {
	ref := field.NewPath("spec", "secretRef")
	var errs field.ErrorList
	if be.Spec.SecretRef.Name == "" {
		errs = append(errs, field.Required(ref.Child("name"), "must be "+EntrySecretName(be.Name)))
	}
	if be.Spec.SecretRef.Namespace == "" {
		errs = append(errs, field.Required(ref.Child("namespace"), "must be "+EntrySecretNamespace))
	}
	if len(errs) > 0 {
		return errs
	}
	if err := validateSecretRef(be); err != nil {
		return field.ErrorList{err}
	}
	return nil
}
