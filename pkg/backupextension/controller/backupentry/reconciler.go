package backupentry

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/operation"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/provider"
)

// Reconciler reconciles BackupEntries.
type Reconciler struct {
	// Client reads BackupEntries from the cache and writes everything.
	Client client.Client
	// APIReader reads secrets and namespaces directly: the controller must not cache every secret of the seed,
	// and must see a namespace that was just created or started terminating.
	APIReader client.Reader
	// Options configure providers and retry intervals.
	Options Options

	runner *operation.Runner[*extensionsv1alpha1.BackupEntry]
}

// Reconcile writes or removes the etcd backup secret of one BackupEntry and, on deletion, its bucket data.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	be := &extensionsv1alpha1.BackupEntry{}
	if err := r.Client.Get(ctx, req.NamespacedName, be); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	ctx = logf.IntoContext(ctx, logf.FromContext(ctx).WithValues("backupEntry", be.Name, "type", be.Spec.Type, "bucket", be.Spec.BucketName))
	provider, ok := r.Options.Providers[be.Spec.Type]
	if !ok {
		return reconcile.Result{}, nil
	}
	if be.DeletionTimestamp != nil {
		return r.runner.Delete(ctx, be, func(ctx context.Context) error { return r.delete(ctx, be, provider) })
	}
	if !operation.NeedsReconcile(be, &be.Status.DefaultStatus, extensionsv1alpha1.BackupEntryFinalizer) {
		return reconcile.Result{}, nil
	}
	return r.runner.Reconcile(ctx, be, func(ctx context.Context) error { return r.ensure(ctx, be, provider) })
}

func (r *Reconciler) ensure(ctx context.Context, be *extensionsv1alpha1.BackupEntry, provider provider.Provider) error {
	namespace, err := ShootNamespace(be.Name)
	if err != nil {
		return err
	}
	request, err := r.entryRequest(ctx, be)
	if err != nil {
		return err
	}
	providerData, err := provider.EtcdSecretData(request)
	if err != nil {
		return err
	}
	if err := r.shootNamespaceUsable(ctx, namespace); err != nil {
		return err
	}
	ref, err := r.writeEtcdBackupSecret(ctx, be, namespace, etcdBackupSecretData(be, request.Credentials, providerData))
	if err != nil {
		return err
	}
	be.Status.EtcdBackupSecretRef = ref
	return nil
}

func (r *Reconciler) delete(ctx context.Context, be *extensionsv1alpha1.BackupEntry, provider provider.Provider) error {
	if namespace, err := ShootNamespace(be.Name); err == nil {
		if err := r.deleteEtcdBackupSecret(ctx, be, namespace); err != nil {
			return err
		}
	}
	request, err := r.entryRequest(ctx, be)
	if err != nil {
		return err
	}
	return provider.DeleteEntry(ctx, request)
}

func (r *Reconciler) entryRequest(ctx context.Context, be *extensionsv1alpha1.BackupEntry) (provider.EntryRequest, error) {
	secret := &corev1.Secret{}
	key := client.ObjectKey{Namespace: be.Spec.SecretRef.Namespace, Name: be.Spec.SecretRef.Name}
	if err := r.APIReader.Get(ctx, key, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return provider.EntryRequest{}, fmt.Errorf("backup entry secret %s does not exist", key)
		}
		return provider.EntryRequest{}, fmt.Errorf("reading backup entry secret %s: %w", key, err)
	}
	return provider.EntryRequest{
		Name:                 be.Name,
		BucketName:           be.Spec.BucketName,
		Region:               be.Spec.Region,
		ProviderConfig:       be.Spec.ProviderConfig,
		BucketProviderStatus: be.Spec.BackupBucketProviderStatus,
		Credentials:          secret.Data,
	}, nil
}

// shootNamespaceUsable turns a missing or terminating shoot namespace into a RetryLaterError: the entry is
// usually created before its namespace's etcd needs the secret, and an entry of a shoot being deleted has
// nowhere to write it.
func (r *Reconciler) shootNamespaceUsable(ctx context.Context, name string) error {
	ns := &corev1.Namespace{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Name: name}, ns); err != nil {
		if apierrors.IsNotFound(err) {
			return r.retryLater(fmt.Errorf("shoot namespace %q does not exist yet", name))
		}
		return fmt.Errorf("reading shoot namespace %q: %w", name, err)
	}
	if ns.DeletionTimestamp != nil || ns.Status.Phase == corev1.NamespaceTerminating {
		return r.retryLater(fmt.Errorf("shoot namespace %q is being deleted", name))
	}
	return nil
}

func (r *Reconciler) retryLater(err error) error {
	return &operation.RetryLaterError{Err: err, After: r.Options.NamespaceRetryInterval}
}
