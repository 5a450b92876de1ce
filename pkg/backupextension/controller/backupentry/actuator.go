package backupentry

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/controller"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/provider"
)

// actuator writes and removes the etcd backup secret of a BackupEntry and deletes its bucket data.
type actuator struct {
	// Client reads BackupEntries from the cache and writes the etcd backup secrets.
	Client client.Client
	// APIReader reads secrets and namespaces directly: the controller must not cache every secret of the seed,
	// and must see a namespace that was just created or started terminating.
	APIReader client.Reader
	// Recorder tells an operator, on the entry, what a delete left in the bucket.
	Recorder recorder.EventRecorder
}

// Ensure writes the etcd backup secret into the shoot namespace and reports it in the status. An entry that
// fails ValidateEntry — one stored before the admission webhook, or admitted while it was bypassed — is
// refused with the fields named, before anything is read or written. An entry secret of the workload-identity
// shape that does not name its WorkloadIdentity (workloadIdentityOf) fails the entry before the shoot
// namespace is looked at, so a malformed secret never passes as a success. A shoot namespace that does not exist
// or is being deleted is no failure, as in Gardener's generic BackupEntry actuator: an entry outlives its
// shoot by the deletion grace period and gardenlet goes on reconciling it, so an error would stand for
// good. The entry succeeds without the secret (secretNotWritten says so), and is reconciled again when the
// namespace is created (AddToManager's namespace watch, Kind.Incomplete).
func (a *actuator) Ensure(ctx context.Context, be *extensionsv1alpha1.BackupEntry, p provider.Provider) error {
	if errs := ValidateEntry(be); len(errs) > 0 {
		return errs.ToAggregate()
	}
	namespace, err := ShootNamespace(be.Name)
	if err != nil {
		return err
	}
	request, entrySecret, err := a.entryRequest(ctx, be)
	if err != nil {
		return err
	}
	identity, err := workloadIdentityOf(entrySecret)
	if err != nil {
		return err
	}
	if err := controller.HoldSecret(ctx, a.Client, entrySecret, extensionsv1alpha1.BackupEntryFinalizer); err != nil {
		return err
	}
	err = a.deployEtcdBackupSecret(ctx, be, namespace, request, identity, p)
	var unusable *ShootNamespaceUnusableError
	if errors.As(err, &unusable) {
		a.secretNotWritten(ctx, be, unusable)
		return nil
	}
	return err
}

// deployEtcdBackupSecret writes the etcd backup secret of a usable shoot namespace and sets
// status.etcdBackupSecretRef; a namespace that is missing or being deleted is a ShootNamespaceUnusableError.
func (a *actuator) deployEtcdBackupSecret(ctx context.Context, be *extensionsv1alpha1.BackupEntry, namespace string,
	request provider.EntryRequest, identity *workloadIdentity, p provider.Provider) error {
	if err := a.shootNamespaceUsable(ctx, namespace); err != nil {
		return err
	}
	providerData, err := p.EtcdSecretData(request)
	if err != nil {
		return err
	}
	ref, err := a.writeEtcdBackupSecret(ctx, be, namespace, etcdBackupSecretData(be, request.Credentials, providerData), identity)
	if err != nil {
		return err
	}
	be.Status.EtcdBackupSecretRef = ref
	return nil
}

// secretNotWritten tells, in the log and as a Normal event on the entry, that its etcd backup secret was not
// written and why. Without the namespace the secret cannot exist, so status.etcdBackupSecretRef is cleared;
// in a namespace being deleted a secret written before may still serve the etcd until it is gone.
func (a *actuator) secretNotWritten(ctx context.Context, be *extensionsv1alpha1.BackupEntry, unusable *ShootNamespaceUnusableError) {
	if unusable.Missing {
		be.Status.EtcdBackupSecretRef = nil
	}
	note := fmt.Sprintf("%s: the etcd backup secret %s was not written; it is written when the namespace exists again", unusable, EtcdBackupSecretNameFor(be.Name))
	logf.FromContext(ctx).Info("Not writing the etcd backup secret", "reason", unusable.Error())
	if a.Recorder != nil {
		a.Recorder.Eventf(be, nil, corev1.EventTypeNormal, "EtcdBackupSecretNotWritten", string(extensionsv1alpha1.LastOperationTypeReconcile), "%s", note)
	}
}

// Incomplete tells whether a successfully reconciled entry still lacks its etcd backup secret (its shoot
// namespace did not exist): the namespace watch may then reconcile it again.
func Incomplete(be *extensionsv1alpha1.BackupEntry) bool { return be.Status.EtcdBackupSecretRef == nil }

// Delete removes the etcd backup secret (only if this entry wrote it) and the entry's objects in the bucket,
// with the entry secret's static keys or its workload identity's token (as Gardener's provider
// extensions). Without the entry secret the objects stay and the entry is released all the same
// (backupsKept, as Gardener's BackupEntry reconciler). Any other failure — a workload identity whose token
// is missing or refused among them — keeps the backups and the entry: the deletion fails with the reason
// in lastError and a warning event, and is retried until it succeeds.
func (a *actuator) Delete(ctx context.Context, be *extensionsv1alpha1.BackupEntry, p provider.Provider) error {
	if namespace, err := ShootNamespace(be.Name); err == nil {
		if err := a.deleteEtcdBackupSecret(ctx, be, namespace); err != nil {
			return err
		}
	}
	request, _, err := a.entryRequest(ctx, be)
	var gone *EntrySecretGoneError
	if errors.As(err, &gone) {
		a.backupsKept(ctx, be, gone.Error())
		return nil
	}
	if err != nil {
		return err
	}
	if err := p.DeleteEntry(ctx, request); err != nil {
		return fmt.Errorf("the backups of this entry in bucket %q were NOT deleted, the deletion is retried: %w", be.Spec.BucketName, err)
	}
	return a.releaseEntrySecret(ctx, be)
}

// releaseEntrySecret removes the entry's finalizer from its entry secret (controller.ReleaseSecret).
func (a *actuator) releaseEntrySecret(ctx context.Context, be *extensionsv1alpha1.BackupEntry) error {
	if err := validateSecretRef(be); err != nil {
		return nil // never touched: the entry secret is only ever held through a valid reference
	}
	key := client.ObjectKey{Namespace: be.Spec.SecretRef.Namespace, Name: be.Spec.SecretRef.Name}
	return controller.ReleaseSecret(ctx, a.Client, a.APIReader, key, extensionsv1alpha1.BackupEntryFinalizer)
}

// backupsKept reports an entry released without deleting its backups, because the extension has no
// credentials to delete them with: the entry secret is gone (Gardener's BackupEntry reconciler skips the
// deletion then too — gardenlet removes the secret only after it gave up on the entry). Waiting would hang
// the entry — and with it the deletion of its shoot — for ever. The backups stay in the bucket until the bucket itself is deleted or an
// operator removes them.
func (a *actuator) backupsKept(ctx context.Context, be *extensionsv1alpha1.BackupEntry, reason string) {
	note := fmt.Sprintf("%s: the backups of this entry in bucket %q were NOT deleted, the entry is released without them", reason, be.Spec.BucketName)
	logf.FromContext(ctx).Info("Releasing the backup entry without deleting its backups", "reason", reason)
	if a.Recorder != nil {
		a.Recorder.Eventf(be, nil, corev1.EventTypeWarning, "BackupsNotDeleted", string(extensionsv1alpha1.LastOperationTypeDelete), "%s", note)
	}
}

// entryRequest reads the entry secret, the only source Gardener's contract allows (validateSecretRef); both
// operations go through it, so neither copies nor uses the credentials of a secret the entry may not name.
// The request carries the secret's credentials (credentialsOf) and a workload identity's token
// (tokenOf); the secret itself is returned for its workload-identity metadata and its finalizer.
func (a *actuator) entryRequest(ctx context.Context, be *extensionsv1alpha1.BackupEntry) (provider.EntryRequest, *corev1.Secret, error) {
	if err := validateSecretRef(be); err != nil {
		return provider.EntryRequest{}, nil, err
	}
	secret := &corev1.Secret{}
	key := client.ObjectKey{Namespace: be.Spec.SecretRef.Namespace, Name: be.Spec.SecretRef.Name}
	if err := a.APIReader.Get(ctx, key, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return provider.EntryRequest{}, nil, &EntrySecretGoneError{Secret: key}
		}
		return provider.EntryRequest{}, nil, fmt.Errorf("reading backup entry secret %s: %w", key, err)
	}
	return provider.EntryRequest{
		Name:                  be.Name,
		BucketName:            be.Spec.BucketName,
		Region:                be.Spec.Region,
		ProviderConfig:        be.Spec.ProviderConfig,
		BucketProviderStatus:  be.Spec.BackupBucketProviderStatus,
		Credentials:           credentialsOf(secret),
		WorkloadIdentityToken: tokenOf(secret),
	}, secret, nil
}

// shootNamespaceUsable reads the shoot namespace directly (a cache would miss one just created or just
// terminating) and returns a ShootNamespaceUnusableError when it does not exist or is being deleted.
func (a *actuator) shootNamespaceUsable(ctx context.Context, name string) error {
	ns := &corev1.Namespace{}
	if err := a.APIReader.Get(ctx, client.ObjectKey{Name: name}, ns); err != nil {
		if apierrors.IsNotFound(err) {
			return &ShootNamespaceUnusableError{Namespace: name, Missing: true}
		}
		return fmt.Errorf("reading shoot namespace %q: %w", name, err)
	}
	if ns.DeletionTimestamp != nil || ns.Status.Phase == corev1.NamespaceTerminating {
		return &ShootNamespaceUnusableError{Namespace: name}
	}
	return nil
}

// ShootNamespaceUnusableError reports a shoot namespace the etcd backup secret cannot be written into: it
// does not exist (Missing), or it is being deleted.
type ShootNamespaceUnusableError struct {
	Namespace string
	Missing   bool
}

func (e *ShootNamespaceUnusableError) Error() string {
	if e.Missing {
		return fmt.Sprintf("shoot namespace %q does not exist", e.Namespace)
	}
	return fmt.Sprintf("shoot namespace %q is being deleted", e.Namespace)
}

// EntrySecretGoneError reports that the entry secret (spec.secretRef) does not exist. A reconcile fails with it;
// a delete releases the entry without deleting its backups (backupsKept).
type EntrySecretGoneError struct {
	Secret client.ObjectKey
}

func (e *EntrySecretGoneError) Error() string {
	return fmt.Sprintf("backup entry secret %s does not exist", e.Secret)
}

// Migrate keeps the entry's data in the bucket, which the destination seed restores from. The etcd backup
// secret of the shoot's entry stays too — our choice: the source seed's etcd keeps running until gardenlet
// destroys it and goes on backing up with that secret, a migration that is rolled back (a `restore` on this
// seed) needs it again, and it goes with the shoot namespace when gardenlet deletes that. A `source-` entry is
// migrated on the destination seed once the copy is done: its secret (source-etcd-backup, credentials of the
// source seed's bucket) serves nothing any more in a namespace that lives on, so it is removed (only if this
// entry wrote it). The entry secret is released (as Gardener's reconciler does on migrate). The runner
// records the operation and releases the entry's finalizer, so the deletion of the migrated entry that
// follows deletes nothing in the bucket.
func (a *actuator) Migrate(ctx context.Context, be *extensionsv1alpha1.BackupEntry, _ provider.Provider) error {
	if err := a.releaseEntrySecret(ctx, be); err != nil {
		return err
	}
	if !strings.HasPrefix(be.Name, SourcePrefix) {
		return nil
	}
	namespace, err := ShootNamespace(be.Name)
	if err != nil {
		return nil
	}
	return a.deleteEtcdBackupSecret(ctx, be, namespace)
}
