package backupbucket

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/operation"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/provider"
)

// Reconciler reconciles BackupBuckets.
type Reconciler struct {
	// Client reads BackupBuckets from the cache and writes everything.
	Client client.Client
	// APIReader reads secrets directly, so the controller neither caches every secret of the seed nor acts
	// on a stale copy of a credential gardenlet just rotated.
	APIReader client.Reader
	// Options configure providers and namespaces.
	Options Options

	runner *operation.Runner[*extensionsv1alpha1.BackupBucket]
}

// Reconcile creates or deletes the bucket of one BackupBucket.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	bb := &extensionsv1alpha1.BackupBucket{}
	if err := r.Client.Get(ctx, req.NamespacedName, bb); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	ctx = logf.IntoContext(ctx, logf.FromContext(ctx).WithValues("backupBucket", bb.Name, "type", bb.Spec.Type))
	provider, ok := r.Options.Providers[bb.Spec.Type]
	if !ok {
		return reconcile.Result{}, nil
	}
	if bb.DeletionTimestamp != nil {
		return r.runner.Delete(ctx, bb, func(ctx context.Context) error { return r.delete(ctx, bb, provider) })
	}
	if !operation.NeedsReconcile(bb, &bb.Status.DefaultStatus, extensionsv1alpha1.BackupBucketFinalizer) {
		return reconcile.Result{}, nil
	}
	return r.runner.Reconcile(ctx, bb, func(ctx context.Context) error { return r.ensure(ctx, bb, provider) })
}

func (r *Reconciler) ensure(ctx context.Context, bb *extensionsv1alpha1.BackupBucket, provider provider.Provider) error {
	request, err := r.bucketRequest(ctx, bb)
	if err != nil {
		return err
	}
	result, err := provider.EnsureBucket(ctx, request)
	if err != nil {
		return err
	}
	ref, err := r.writeGeneratedSecret(ctx, bb, result.GeneratedSecretData)
	if err != nil {
		return err
	}
	bb.Status.GeneratedSecretRef = ref
	bb.Status.ProviderStatus = result.ProviderStatus
	return nil
}

func (r *Reconciler) delete(ctx context.Context, bb *extensionsv1alpha1.BackupBucket, provider provider.Provider) error {
	request, err := r.bucketRequest(ctx, bb)
	if err != nil {
		return err
	}
	if err := provider.DeleteBucket(ctx, request); err != nil {
		return err
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: GeneratedSecretName(bb.Name), Namespace: r.Options.GeneratedSecretNamespace}}
	if err := r.Client.Delete(ctx, secret); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting the generated secret %s: %w", client.ObjectKeyFromObject(secret), err)
	}
	return nil
}

func (r *Reconciler) bucketRequest(ctx context.Context, bb *extensionsv1alpha1.BackupBucket) (provider.BucketRequest, error) {
	secret := &corev1.Secret{}
	key := client.ObjectKey{Namespace: bb.Spec.SecretRef.Namespace, Name: bb.Spec.SecretRef.Name}
	if err := r.APIReader.Get(ctx, key, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return provider.BucketRequest{}, fmt.Errorf("bucket secret %s does not exist", key)
		}
		return provider.BucketRequest{}, fmt.Errorf("reading bucket secret %s: %w", key, err)
	}
	return provider.BucketRequest{
		Name:           bb.Name,
		Region:         bb.Spec.Region,
		ProviderConfig: bb.Spec.ProviderConfig,
		Credentials:    secret.Data,
	}, nil
}

// writeGeneratedSecret writes the generated bucket secret, owned by the BackupBucket so that it also goes
// away if the bucket object is removed without the controller.
func (r *Reconciler) writeGeneratedSecret(ctx context.Context, bb *extensionsv1alpha1.BackupBucket, data map[string][]byte) (*corev1.SecretReference, error) {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: GeneratedSecretName(bb.Name), Namespace: r.Options.GeneratedSecretNamespace}}
	_, err := controllerutil.CreateOrUpdate(ctx, r.Client, secret, func() error {
		secret.Type = corev1.SecretTypeOpaque
		secret.Data = data
		return controllerutil.SetOwnerReference(bb, secret, r.Client.Scheme())
	})
	if err != nil {
		return nil, fmt.Errorf("writing the generated secret %s: %w", client.ObjectKeyFromObject(secret), err)
	}
	return &corev1.SecretReference{Name: secret.Name, Namespace: secret.Namespace}, nil
}
