package backupentry

import (
	"context"
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

// writeEtcdBackupSecret writes the secret and marks it as created by this entry. A secret another entry
// created is taken over: the entry being reconciled is the current one for the namespace.
func (a *actuator) writeEtcdBackupSecret(ctx context.Context, be *extensionsv1alpha1.BackupEntry, namespace string, data map[string][]byte) (*corev1.SecretReference, error) {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: EtcdBackupSecretNameFor(be.Name), Namespace: namespace}}
	_, err := controllerutil.CreateOrUpdate(ctx, a.Client, secret, func() error {
		if previous := secret.Annotations[CreatedByAnnotation]; previous != "" && previous != be.Name {
			logf.FromContext(ctx).Info("Taking over the etcd backup secret from another backup entry", "previousEntry", previous)
		}
		metav1.SetMetaDataAnnotation(&secret.ObjectMeta, CreatedByAnnotation, be.Name)
		secret.Type = corev1.SecretTypeOpaque
		secret.Data = data
		return nil
	})
	if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
		return nil, a.retryLater(fmt.Errorf("shoot namespace %q is being deleted", namespace))
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
