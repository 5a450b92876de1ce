package backupbucket

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	druidvalidation "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1/validation"
	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
)

// Where gardenlet relays the credentials of a bucket (Gardener's BackupBucket reconciler,
// generateBackupBucketSecretName): the only source secret a BackupBucket may name.
const BucketSecretNamespace = "garden"

// BucketSecretName is the secret gardenlet relays for a bucket.
func BucketSecretName(bucket string) string { return "bucket-" + bucket }

// maxBucketNameLength is the longest bucket name object stores accept (S3 and GCS: 63); the bucket is
// created in the store under the BackupBucket's name.
const maxBucketNameLength = 63

// ValidateBucket lists what makes a bucket unusable: the fields Gardener's own extension validation requires
// (type, region, secretRef), a name no store takes, a secretRef other than the bucket secret gardenlet
// relays, and a GeneratedSecretNamespaceAnnotation that is no namespace name. The admission webhook refuses such buckets and the controller refuses to act on one that got past it.
func ValidateBucket(bb *extensionsv1alpha1.BackupBucket) field.ErrorList {
	var errs field.ErrorList
	if len(bb.Name) > maxBucketNameLength {
		errs = append(errs, field.TooLong(field.NewPath("metadata", "name"), bb.Name, maxBucketNameLength))
	}
	spec := field.NewPath("spec")
	if bb.Spec.Type == "" {
		errs = append(errs, field.Required(spec.Child("type"), "the provider type selects the extension"))
	}
	if bb.Spec.Region == "" {
		errs = append(errs, field.Required(spec.Child("region"), "the region of the bucket"))
	}
	errs = append(errs, validateGeneratedSecretNamespace(bb)...)
	return append(errs, validateSecretRef(bb)...)
}

// ValidateBucketUpdate lists what an update must not do: change the provider type (Gardener's rule: another
// extension would own a bucket this one created), or change the spec of a bucket being deleted. The create
// rules apply only to fields the update changes, so a bucket stored before these rules still takes its
// finalizer removal and operation annotations.
func ValidateBucketUpdate(newBucket, oldBucket *extensionsv1alpha1.BackupBucket) field.ErrorList {
	spec := field.NewPath("spec")
	if newBucket.DeletionTimestamp != nil && !apiequality.Semantic.DeepEqual(newBucket.Spec, oldBucket.Spec) {
		return field.ErrorList{field.Forbidden(spec, "must not change while the bucket is being deleted")}
	}
	errs := apivalidation.ValidateImmutableField(newBucket.Spec.Type, oldBucket.Spec.Type, spec.Child("type"))
	return append(errs, druidvalidation.Ratchet(ValidateBucket(newBucket), newBucket, oldBucket)...)
}

// validateSecretRef refuses a spec.secretRef other than garden/bucket-<bucket name>. The controller hands the
// secret's data to the provider as credentials and the s3 provider copies them into the generated secret
// garden/generated-bucket-<name>, so a bucket naming any other secret — a shoot's, kube-system's, another
// bucket's generated one — would make the extension use and copy credentials that are not the bucket's.
func validateSecretRef(bb *extensionsv1alpha1.BackupBucket) field.ErrorList {
	path := field.NewPath("spec", "secretRef")
	want := corev1.SecretReference{Name: BucketSecretName(bb.Name), Namespace: BucketSecretNamespace}
	var errs field.ErrorList
	if bb.Spec.SecretRef.Name == "" {
		errs = append(errs, field.Required(path.Child("name"), "must be "+want.Name))
	}
	if bb.Spec.SecretRef.Namespace == "" {
		errs = append(errs, field.Required(path.Child("namespace"), "must be "+want.Namespace))
	}
	if len(errs) == 0 && bb.Spec.SecretRef != want {
		got := bb.Spec.SecretRef.Namespace + "/" + bb.Spec.SecretRef.Name
		errs = append(errs, field.Invalid(path, got,
			fmt.Sprintf("must be %s/%s, the bucket secret gardenlet relays for this BackupBucket; the extension uses no other secret", want.Namespace, want.Name)))
	}
	return errs
}
