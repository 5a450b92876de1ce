package backupbucket

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/controller"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/provider"
)

// actuator creates and deletes the bucket of a BackupBucket.
type actuator struct {
	// Client writes the generated secret.
	Client client.Client
	// APIReader reads secrets directly, so the controller neither caches every secret of the seed nor acts
	// on a stale copy of a credential gardenlet just rotated.
	APIReader client.Reader
	// Options configure the namespaces of the generated secrets.
	Options Options
	// Recorder tells an operator, on the bucket, about a generated secret it left because it does not own it.
	Recorder recorder.EventRecorder
}

// Ensure creates the bucket and writes the generated secret (generatedSecretKey). A bucket that fails
// ValidateBucket — one stored before the admission webhook, or admitted while it was bypassed — or names a
// namespace for its generated secret the extension may not write into is refused with the field named. A
// secret of the generated secret's name the bucket does not own is not overwritten
// (GeneratedSecretNotOwnedError). A generated secret the status names elsewhere (the annotation changed) is
// deleted once the new one is written, if the bucket owns it.
func (a *actuator) Ensure(ctx context.Context, bb *extensionsv1alpha1.BackupBucket, p provider.Provider) error {
	if errs := ValidateBucket(bb); len(errs) > 0 {
		return errs.ToAggregate()
	}
	key, err := a.generatedSecretKey(bb)
	if err != nil {
		return err
	}
	request, bucketSecret, err := a.bucketRequest(ctx, bb)
	if err != nil {
		return err
	}
	if err := controller.HoldSecret(ctx, a.Client, bucketSecret, extensionsv1alpha1.BackupBucketFinalizer); err != nil {
		return err
	}
	result, err := p.EnsureBucket(ctx, request)
	if err != nil {
		return err
	}
	ref, err := a.writeGeneratedSecret(ctx, bb, key, result.GeneratedSecretData)
	if err != nil {
		return err
	}
	if previous := bb.Status.GeneratedSecretRef; previous != nil && *previous != *ref {
		if err := a.deleteGeneratedSecrets(ctx, bb); err != nil {
			return err
		}
	}
	bb.Status.GeneratedSecretRef = ref
	bb.Status.ProviderStatus = result.ProviderStatus
	return nil
}

// Delete deletes the bucket and the generated secret (only one the bucket owns, deleteGeneratedSecrets), then
// releases the bucket secret.
func (a *actuator) Delete(ctx context.Context, bb *extensionsv1alpha1.BackupBucket, p provider.Provider) error {
	request, _, err := a.bucketRequest(ctx, bb)
	if err != nil {
		return err
	}
	if err := p.DeleteBucket(ctx, request); err != nil {
		return err
	}
	var current []client.ObjectKey
	if key, err := a.generatedSecretKey(bb); err == nil {
		current = append(current, key)
	}
	if err := a.deleteGeneratedSecrets(ctx, bb, current...); err != nil {
		return err
	}
	return a.releaseBucketSecret(ctx, bb)
}

// releaseBucketSecret removes the bucket's finalizer from its bucket secret (controller.ReleaseSecret).
func (a *actuator) releaseBucketSecret(ctx context.Context, bb *extensionsv1alpha1.BackupBucket) error {
	if errs := validateSecretRef(bb); len(errs) > 0 {
		return nil // never touched: the bucket secret is only ever held through a valid reference
	}
	key := client.ObjectKey{Namespace: bb.Spec.SecretRef.Namespace, Name: bb.Spec.SecretRef.Name}
	return controller.ReleaseSecret(ctx, a.Client, a.APIReader, key, extensionsv1alpha1.BackupBucketFinalizer)
}

// bucketRequest reads the bucket secret, the only source Gardener's contract allows (validateSecretRef); both
// operations go through it, so neither uses the credentials of a secret the bucket may not name.
// The secret itself is returned too, for its finalizer.
func (a *actuator) bucketRequest(ctx context.Context, bb *extensionsv1alpha1.BackupBucket) (provider.BucketRequest, *corev1.Secret, error) {
	if errs := validateSecretRef(bb); len(errs) > 0 {
		return provider.BucketRequest{}, nil, errs.ToAggregate()
	}
	secret := &corev1.Secret{}
	key := client.ObjectKey{Namespace: bb.Spec.SecretRef.Namespace, Name: bb.Spec.SecretRef.Name}
	if err := a.APIReader.Get(ctx, key, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return provider.BucketRequest{}, nil, fmt.Errorf("bucket secret %s does not exist", key)
		}
		return provider.BucketRequest{}, nil, fmt.Errorf("reading bucket secret %s: %w", key, err)
	}
	return provider.BucketRequest{
		Name:           bb.Name,
		Region:         bb.Spec.Region,
		ProviderConfig: bb.Spec.ProviderConfig,
		Credentials:    secret.Data,
	}, secret, nil
}

// Migrate does nothing outside the cluster: a bucket belongs to its seed, not to a shoot's control plane, and
// a BackupBucket deleted after its migration must leave the bucket and its backups alone. The bucket secret
// is released, so it does not outlive the object on a finalizer nobody removes. The runner records the
// operation and releases the object's finalizer.
func (a *actuator) Migrate(ctx context.Context, bb *extensionsv1alpha1.BackupBucket, _ provider.Provider) error {
	return a.releaseBucketSecret(ctx, bb)
}
