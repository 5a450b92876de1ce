package backupentry

import (
	"context"
	"errors"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupsecret"
)

// etcdBackupSecretData is the entry credentials, the bucket name and the provider's keys; provider keys win
// over credentials of the same name, and bucketName always comes from the entry.
func etcdBackupSecretData(be *extensionsv1alpha1.BackupEntry, credentials, providerData map[string][]byte) map[string][]byte {
	data := make(map[string][]byte, len(credentials)+len(providerData)+1)
	maps.Copy(data, credentials)
	maps.Copy(data, providerData)
	data[backupsecret.KeyBucketName] = []byte(be.Spec.BucketName)
	return data
}

// writeEtcdBackupSecret writes the secret and marks it as created by this entry. It overwrites only a secret
// a backup entry wrote (ownedByAnEntry): one another entry created is taken over — the entry being reconciled
// is the current one for the namespace, after a shoot was deleted and created again under the same name —
// but a secret nobody's entry wrote is left as it is and the entry fails with a NotOwnedError. With a
// workload identity the secret is handed to gardenlet's token requestor (workloadIdentity.applyTo); with
// static credentials any workload-identity metadata of an earlier write is dropped. The update carries the
// resourceVersion read, so a token the requestor writes in between makes it fail and retry, not lose it. A
// namespace that started terminating since it was checked refuses the write: a ShootNamespaceUnusableError.
func (a *actuator) writeEtcdBackupSecret(ctx context.Context, be *extensionsv1alpha1.BackupEntry, namespace string, data map[string][]byte, identity *workloadIdentity) (*corev1.SecretReference, error) {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: EtcdBackupSecretNameFor(be.Name), Namespace: namespace}}
	_, err := controllerutil.CreateOrUpdate(ctx, a.Client, secret, func() error {
		if !secret.CreationTimestamp.IsZero() && !ownedByAnEntry(secret) {
			return &NotOwnedError{Secret: client.ObjectKeyFromObject(secret), Entry: be.Name}
		}
		if previous := secret.Annotations[CreatedByAnnotation]; previous != "" && previous != be.Name {
			logf.FromContext(ctx).Info("Taking over the etcd backup secret from another backup entry", "previousEntry", previous)
		}
		if identity != nil {
			data = identity.applyTo(secret, data)
		} else {
			dropWorkloadIdentity(&secret.ObjectMeta)
		}
		metav1.SetMetaDataAnnotation(&secret.ObjectMeta, CreatedByAnnotation, be.Name)
		secret.Type = corev1.SecretTypeOpaque
		secret.Data = data
		return nil
	})
	var notOwned *NotOwnedError
	if errors.As(err, &notOwned) {
		return nil, notOwned
	}
	if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
		return nil, &ShootNamespaceUnusableError{Namespace: namespace}
	}
	if err != nil {
		return nil, fmt.Errorf("writing the etcd backup secret %s: %w", client.ObjectKeyFromObject(secret), err)
	}
	return &corev1.SecretReference{Name: secret.Name, Namespace: secret.Namespace}, nil
}

// deleteEtcdBackupSecret removes the secret only when this entry created it: after a shoot is deleted and a
// new one with the same name is created, the old entry expires while the new shoot's etcd uses the secret.
func (a *actuator) deleteEtcdBackupSecret(ctx context.Context, be *extensionsv1alpha1.BackupEntry, namespace string) error {
	secret := &corev1.Secret{}
	key := client.ObjectKey{Namespace: namespace, Name: EtcdBackupSecretNameFor(be.Name)}
	if err := a.APIReader.Get(ctx, key, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("reading the etcd backup secret %s: %w", key, err)
	}
	if owner := secret.Annotations[CreatedByAnnotation]; owner != be.Name {
		logf.FromContext(ctx).Info("Keeping the etcd backup secret another backup entry created", "secret", key, "createdBy", owner)
		return nil
	}
	// Preconditions make sure a secret replaced by a new entry since the read above is not deleted.
	if err := a.Client.Delete(ctx, secret, client.Preconditions{UID: &secret.UID, ResourceVersion: &secret.ResourceVersion}); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting the etcd backup secret %s: %w", key, err)
	}
	return nil
}

// ownedByAnEntry tells whether a backup entry wrote the secret: every etcd backup secret this extension has
// written carries CreatedByAnnotation (it has from the start, so secrets of earlier versions are
// recognised), and so does one a Gardener provider extension wrote — Gardener's generic BackupEntry
// actuator sets the same annotation — which a switch-over to this extension takes over.
func ownedByAnEntry(secret *corev1.Secret) bool {
	return secret.Annotations[CreatedByAnnotation] != ""
}

// NotOwnedError reports an etcd backup secret that exists without CreatedByAnnotation: someone other than a
// backup entry wrote it (an operator restoring from a hand-made secret, another tool), and overwriting it
// would point the shoot's backups somewhere else without anyone asking. The entry fails until the secret is
// removed or handed over by annotating it.
type NotOwnedError struct {
	Secret client.ObjectKey
	Entry  string
}

func (e *NotOwnedError) Error() string {
	return fmt.Sprintf("etcd backup secret %s was not written by a backup entry (it has no annotation %s) and is left untouched: "+
		"delete it, or annotate it with %s=%s to hand it over to this entry", e.Secret, CreatedByAnnotation, CreatedByAnnotation, e.Entry)
}
