// Package backupvalidation is the backup extension's validating webhook for BackupEntries and BackupBuckets.
// Before it, only the CRD schema checked them: an entry without a bucket, with a name leading to any
// namespace, or a bucket naming any secret was admitted and failed (or worse, acted) later. It runs the
// rules the controllers check again before they act (backupentry.ValidateEntry, backupbucket.ValidateBucket),
// so the refusal comes at the write, with the fields named, and the controllers stay safe without it.
package backupvalidation

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/controller/backupbucket"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/controller/backupentry"
)

// Handles tells whether this extension handles a provider type. Objects of other types belong to another
// backup extension on the same seed and are admitted untouched; an empty type belongs to nobody and is judged.
type Handles func(providerType string) bool

func (h Handles) judges(types ...string) bool {
	for _, t := range types {
		if t == "" || h == nil || h(t) {
			return true
		}
	}
	return false
}

// EntryValidator admits BackupEntries that pass backupentry.ValidateEntry (and ValidateEntryUpdate on updates).
type EntryValidator struct{ Handles Handles }

var _ admission.Validator[*extensionsv1alpha1.BackupEntry] = EntryValidator{}

// ValidateCreate checks a new entry.
func (v EntryValidator) ValidateCreate(_ context.Context, be *extensionsv1alpha1.BackupEntry) (admission.Warnings, error) {
	if !v.Handles.judges(be.Spec.Type) {
		return nil, nil
	}
	return nil, invalid("BackupEntry", be.Name, backupentry.ValidateEntry(be))
}

// ValidateUpdate checks an updated entry, including its immutable fields. An update that moves an entry to or
// from one of this extension's types is judged as well.
func (v EntryValidator) ValidateUpdate(_ context.Context, oldEntry, newEntry *extensionsv1alpha1.BackupEntry) (admission.Warnings, error) {
	if !v.Handles.judges(oldEntry.Spec.Type, newEntry.Spec.Type) {
		return nil, nil
	}
	return nil, invalid("BackupEntry", newEntry.Name, backupentry.ValidateEntryUpdate(newEntry, oldEntry))
}

// ValidateDelete allows every deletion: the controller's delete operation decides what goes.
func (EntryValidator) ValidateDelete(context.Context, *extensionsv1alpha1.BackupEntry) (admission.Warnings, error) {
	return nil, nil
}

// BucketValidator admits BackupBuckets that pass backupbucket.ValidateBucket (and ValidateBucketUpdate on updates).
type BucketValidator struct{ Handles Handles }

var _ admission.Validator[*extensionsv1alpha1.BackupBucket] = BucketValidator{}

// ValidateCreate checks a new bucket.
func (v BucketValidator) ValidateCreate(_ context.Context, bb *extensionsv1alpha1.BackupBucket) (admission.Warnings, error) {
	if !v.Handles.judges(bb.Spec.Type) {
		return nil, nil
	}
	return nil, invalid("BackupBucket", bb.Name, backupbucket.ValidateBucket(bb))
}

// ValidateUpdate checks an updated bucket, including its immutable fields.
func (v BucketValidator) ValidateUpdate(_ context.Context, oldBucket, newBucket *extensionsv1alpha1.BackupBucket) (admission.Warnings, error) {
	if !v.Handles.judges(oldBucket.Spec.Type, newBucket.Spec.Type) {
		return nil, nil
	}
	return nil, invalid("BackupBucket", newBucket.Name, backupbucket.ValidateBucketUpdate(newBucket, oldBucket))
}

// ValidateDelete allows every deletion.
func (BucketValidator) ValidateDelete(context.Context, *extensionsv1alpha1.BackupBucket) (admission.Warnings, error) {
	return nil, nil
}

// invalid turns field errors into the apiserver's 422 Invalid status, which kubectl prints field by field.
func invalid(kind, name string, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(extensionsv1alpha1.SchemeGroupVersion.WithKind(kind).GroupKind(), name, errs)
}
