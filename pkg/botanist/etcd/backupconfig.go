package etcd

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
)

// BackupConfig names where the main etcd backs up to. Everything else (secret, bucket, provider) is read from
// the BackupEntry and the secret its controller wrote, so Gardener stays cloud-agnostic.
type BackupConfig struct {
	// BackupEntryName is the shoot's BackupEntry, `<shoot-namespace>--<shoot-uid>`.
	BackupEntryName string
	// Provider overrides the store provider derived from the BackupEntry's spec.type.
	Provider *druidv1alpha1.StorageProvider
}

const (
	// legacyBackupSecretName is the secret older extensions write without naming it in the BackupEntry status.
	legacyBackupSecretName = "etcd-backup"
	// sourceEntryPrefix marks the BackupEntry of a control-plane migration's source (as Gardener names it).
	sourceEntryPrefix = "source-"
	// sourceSecretPrefix marks the backup secret a source entry writes.
	sourceSecretPrefix = "source-"
)

// providerByEntryType maps the provider types of BackupEntries (extension names) to the store providers the
// backup-restore sidecar understands.
var providerByEntryType = map[string]druidv1alpha1.StorageProvider{
	"local":     druidv1alpha1.StorageProviderLocal,
	"s3":        druidv1alpha1.StorageProviderS3,
	"aws":       druidv1alpha1.StorageProviderS3,
	"azure":     druidv1alpha1.StorageProviderABS,
	"gcp":       druidv1alpha1.StorageProviderGCS,
	"openstack": druidv1alpha1.StorageProviderSwift,
	"alicloud":  druidv1alpha1.StorageProviderOSS,
}

// StorageProviderForEntryType is the store provider for a BackupEntry's spec.type.
func StorageProviderForEntryType(entryType string) (druidv1alpha1.StorageProvider, error) {
	if p, ok := providerByEntryType[strings.ToLower(entryType)]; ok {
		return p, nil
	}
	return "", fmt.Errorf("no etcd store provider is known for backup provider type %q", entryType)
}

// backupStore is the store of the Etcd before the backup secret was checked for its bucket.
type backupStore struct {
	secretRef corev1.SecretReference
	provider  druidv1alpha1.StorageProvider
	prefix    string
}

// waitForBackupEntry waits until the BackupEntry is reconciled for its current generation and returns the
// store it describes. The shoot flow creates the entry right before the etcds; its secret appears only once
// the extension reconciled it, so waiting here is what makes the Etcd's first write already complete.
func (e *etcd) waitForBackupEntry(ctx context.Context, cfg *BackupConfig) (backupStore, error) {
	be := &extensionsv1alpha1.BackupEntry{}
	// notReady is the state of the last successful read; a failed read (transient) does not overwrite it.
	notReady, readErr := "", ""
	err := wait.PollUntilContextTimeout(ctx, e.values.WaitInterval, e.values.WaitTimeout, true, func(ctx context.Context) (bool, error) {
		readErr = ""
		if err := e.client.Get(ctx, client.ObjectKey{Name: cfg.BackupEntryName}, be); err != nil {
			if apierrors.IsNotFound(err) {
				notReady = "it does not exist"
			} else {
				readErr = err.Error()
			}
			return false, nil
		}
		notReady = backupEntryNotReady(be)
		return notReady == "", nil
	})
	if err != nil {
		if notReady == "" {
			notReady = "reading it failed: " + readErr
		}
		if ctx.Err() != nil {
			return backupStore{}, fmt.Errorf("waiting for BackupEntry %s: %w (%s)", cfg.BackupEntryName, ctx.Err(), notReady)
		}
		return backupStore{}, fmt.Errorf("BackupEntry %s not reconciled after %s: %s", cfg.BackupEntryName, e.values.WaitTimeout, notReady)
	}
	return e.storeFromEntry(be, cfg)
}

// backupEntryNotReady says why the entry cannot be used yet, or "" when it can.
func backupEntryNotReady(be *extensionsv1alpha1.BackupEntry) string {
	s := be.Status
	switch {
	case be.DeletionTimestamp != nil:
		return "it is being deleted"
	case s.LastOperation == nil:
		return "it was not reconciled yet"
	case s.LastOperation.Type == extensionsv1alpha1.LastOperationTypeMigrate:
		// An etcd deployed with a migrated entry would back up into the prefix the destination seed copies
		// from: two clusters writing one history.
		return "it was migrated to another seed (last operation Migrate " + string(s.LastOperation.State) + "); restore it first"
	case s.ObservedGeneration != be.Generation:
		return fmt.Sprintf("observed generation %d, current %d", s.ObservedGeneration, be.Generation)
	case be.Annotations[extensionsv1alpha1.OperationAnnotation] != "":
		return "operation annotation " + be.Annotations[extensionsv1alpha1.OperationAnnotation] + " still set"
	case s.LastOperation.State != extensionsv1alpha1.LastOperationStateSucceeded:
		msg := fmt.Sprintf("last operation %s is %s", s.LastOperation.Type, s.LastOperation.State)
		if s.LastError != nil {
			msg += ": " + s.LastError.Description
		}
		return msg
	}
	return ""
}

// storeSpec is the Etcd's store without its container, which only the backup secret knows.
func (s backupStore) storeSpec() *druidv1alpha1.StoreSpec {
	return &druidv1alpha1.StoreSpec{SecretRef: &corev1.SecretReference{Name: s.secretRef.Name, Namespace: s.secretRef.Namespace},
		Provider: ptr.To(s.provider), Prefix: s.prefix}
}

// storeFromEntry takes the secret from status.etcdBackupSecretRef, falling back to etcd-backup
// (source-etcd-backup for a source entry) in the control-plane namespace for entries reconciled by extensions
// that do not expose it. The prefix is the entry name without `source-`: the source entry of a migration
// reaches the backups the shoot's entry wrote on the source seed.
func (e *etcd) storeFromEntry(be *extensionsv1alpha1.BackupEntry, cfg *BackupConfig) (backupStore, error) {
	legacyName := legacyBackupSecretName
	if strings.HasPrefix(be.Name, sourceEntryPrefix) {
		legacyName = sourceSecretPrefix + legacyBackupSecretName
	}
	ref := corev1.SecretReference{Name: legacyName, Namespace: e.namespace}
	if r := be.Status.EtcdBackupSecretRef; r != nil && r.Name != "" {
		ref = *r
		if ref.Namespace == "" {
			ref.Namespace = e.namespace
		}
	}
	if ref.Namespace != e.namespace {
		return backupStore{}, fmt.Errorf("BackupEntry %s names backup secret %s/%s, but the etcd runs in %s and can mount only secrets of its namespace",
			be.Name, ref.Namespace, ref.Name, e.namespace)
	}
	provider := druidv1alpha1.StorageProvider("")
	if cfg.Provider != nil {
		provider = *cfg.Provider
	} else {
		p, err := StorageProviderForEntryType(be.Spec.Type)
		if err != nil {
			return backupStore{}, fmt.Errorf("BackupEntry %s: %w", be.Name, err)
		}
		provider = p
	}
	return backupStore{secretRef: ref, provider: provider, prefix: strings.TrimPrefix(be.Name, sourceEntryPrefix) + "/" + e.name()}, nil
}
