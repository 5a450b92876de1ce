package seedworkflow

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"sigs.k8s.io/controller-runtime/pkg/client"

	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/controller/backupentry"
	s3provider "github.com/gardener-etcd/gardener-etcd/pkg/backupextension/provider/s3"
)

// CreateShoot creates the shoot's control-plane namespace, the S3 credentials in the garden namespace, a
// BackupBucket of type s3 on the seed's S3 server and the shoot's BackupEntry in it, and waits until the
// extension reconciled both. It sets env.BackupEntryName.
func CreateShoot(ctx context.Context, env *Env) (string, error) {
	return createShoot(ctx, env, nil)
}

// createShoot is CreateShoot with annotations on a new BackupEntry (gardenlet's restore operation).
func createShoot(ctx context.Context, env *Env, entryAnnotations map[string]string) (string, error) {
	s3 := env.Seed.S3()
	if s3 == nil {
		return "", errors.New("the local seed runs without its S3 server")
	}
	if err := ensureShootNamespace(ctx, env); err != nil {
		return "", err
	}
	bucket, err := ensureBucket(ctx, env, env.Bucket())
	if err != nil {
		return "", err
	}
	if env.BackupEntryName == "" {
		env.BackupEntryName = env.Namespace + "--" + string(uuid.NewUUID())
	}
	entry, err := ensureEntry(ctx, env, env.BackupEntryName, env.Bucket(), entryAnnotations)
	if err != nil {
		return "", err
	}
	for _, obj := range []client.Object{bucket, entry} {
		if err := waitExtensionSucceeded(ctx, env, obj); err != nil {
			return "", err
		}
	}
	if entry.Status.EtcdBackupSecretRef == nil {
		return "", fmt.Errorf("BackupEntry %s names no etcd backup secret", entry.Name)
	}
	return fmt.Sprintf("namespace %s, BackupBucket %s (s3 at %s), BackupEntry %s → secret %s/%s", env.Namespace, env.Bucket(),
		s3.Endpoint, entry.Name, entry.Status.EtcdBackupSecretRef.Namespace, entry.Status.EtcdBackupSecretRef.Name), nil
}

// s3Credentials are the seed S3 server's keys in the data keys of the s3 provider's bucket and entry secrets.
func s3Credentials(env *Env) map[string][]byte {
	s3 := env.Seed.S3()
	return map[string][]byte{
		s3provider.DataKeyAccessKeyID:     []byte(s3.AccessKey),
		s3provider.DataKeySecretAccessKey: []byte(s3.SecretKey),
		s3provider.DataKeyRegion:          []byte(s3.Region),
		s3provider.DataKeyEndpoint:        []byte(s3.Endpoint),
		s3provider.DataKeyForcePathStyle:  []byte("true"),
	}
}

// ensureBucket creates (or keeps) a BackupBucket of type s3 on the seed's S3 server, with its secret where
// gardenlet relays it.
func ensureBucket(ctx context.Context, env *Env, name string) (*extensionsv1alpha1.BackupBucket, error) {
	secret, err := createGardenSecret(ctx, env, "bucket-"+name, s3Credentials(env))
	if err != nil {
		return nil, err
	}
	bucket := &extensionsv1alpha1.BackupBucket{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: extensionsv1alpha1.BackupBucketSpec{DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "s3"},
			Region: Region, SecretRef: secret},
	}
	if err := env.Client.Create(ctx, bucket); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating BackupBucket %s: %w", name, err)
	}
	return bucket, nil
}

// ensureEntry creates (or keeps) a BackupEntry in bucket, with its secret where gardenlet relays it: the
// extension accepts no other source for an entry.
func ensureEntry(ctx context.Context, env *Env, name, bucket string, annotations map[string]string) (*extensionsv1alpha1.BackupEntry, error) {
	secret, err := createGardenSecret(ctx, env, backupentry.EntrySecretName(name), s3Credentials(env))
	if err != nil {
		return nil, err
	}
	entry := &extensionsv1alpha1.BackupEntry{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations},
		Spec: extensionsv1alpha1.BackupEntrySpec{DefaultSpec: extensionsv1alpha1.DefaultSpec{Type: "s3"},
			Region: Region, BucketName: bucket, SecretRef: secret},
	}
	if err := env.Client.Create(ctx, entry); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating BackupEntry %s: %w", name, err)
	}
	return entry, nil
}

// createGardenSecret creates (or keeps) a secret of the garden namespace and returns its reference.
func createGardenSecret(ctx context.Context, env *Env, name string, data map[string][]byte) (corev1.SecretReference, error) {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: GardenNamespace}, Data: data}
	if err := env.Client.Create(ctx, secret); err != nil && !apierrors.IsAlreadyExists(err) {
		return corev1.SecretReference{}, fmt.Errorf("creating secret %s/%s: %w", GardenNamespace, name, err)
	}
	return corev1.SecretReference{Name: name, Namespace: GardenNamespace}, nil
}

// waitExtensionSucceeded waits until the extension reconciled obj (a BackupBucket or BackupEntry) at its
// current generation, reading it into obj.
func waitExtensionSucceeded(ctx context.Context, env *Env, obj client.Object) error {
	what := fmt.Sprintf("%T %s reconciled", obj, obj.GetName())
	return poll(ctx, env, what, func(ctx context.Context) (string, error) {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return "", err
		}
		var status extensionsv1alpha1.DefaultStatus
		switch o := obj.(type) {
		case *extensionsv1alpha1.BackupBucket:
			status = o.Status.DefaultStatus
		case *extensionsv1alpha1.BackupEntry:
			status = o.Status.DefaultStatus
		}
		switch {
		case status.LastOperation == nil || status.ObservedGeneration != obj.GetGeneration():
			return "not reconciled yet", nil
		case status.LastOperation.State != extensionsv1alpha1.LastOperationStateSucceeded:
			msg := fmt.Sprintf("last operation %s", status.LastOperation.State)
			if status.LastError != nil {
				msg += ": " + status.LastError.Description
			}
			return msg, nil
		}
		return "", nil
	})
}
