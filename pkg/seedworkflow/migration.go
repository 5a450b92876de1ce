package seedworkflow

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/controller/backupentry"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
)

// MigrationSource is what the destination of a control-plane migration needs to know about the source: the
// BackupEntry the source cluster backed up under and the bucket it wrote to.
type MigrationSource struct {
	BackupEntryName string
	BucketName      string
}

// MigrateShoot is the source seed's part of a control-plane migration, in gardenlet's order: a final full
// snapshot of etcd-main (the caller stopped every writer first, as gardenlet scales kube-apiserver down),
// the BackupEntry migrated (the extension lets go of it and keeps the backups), both Etcds destroyed, and
// the migrated entry deleted, which leaves the bucket untouched. druid keeps the members' volumes, so the
// source namespace still holds the data until whoever owns the namespace deletes it.
func MigrateShoot(ctx context.Context, env *Env) (MigrationSource, string, error) {
	source := MigrationSource{BackupEntryName: env.BackupEntryName, BucketName: env.Bucket()}
	answer, err := Component(env, etcd.RoleMain).Snapshot(ctx)
	if err != nil {
		return source, "", fmt.Errorf("final full snapshot: %w", err)
	}
	if err := migrateEntry(ctx, env, env.BackupEntryName); err != nil {
		return source, "", err
	}
	for _, role := range []string{etcd.RoleMain, etcd.RoleEvents} {
		c := Component(env, role)
		if err := c.Destroy(ctx); err != nil {
			return source, "", err
		}
		if err := c.WaitCleanup(ctx); err != nil {
			return source, "", err
		}
	}
	if err := deleteEntry(ctx, env, env.BackupEntryName); err != nil {
		return source, "", err
	}
	return source, fmt.Sprintf("final snapshot %s; BackupEntry %s migrated and deleted, backups kept in bucket %s", answer, source.BackupEntryName, source.BucketName), nil
}

// RestoreShoot is the destination seed's part of a control-plane migration: the shoot's namespace, bucket and
// BackupEntry (with gardenlet's restore operation), the `source-` BackupEntry on the source's bucket, the
// copy of the source's backups into the shoot's store (EtcdCopyBackupsTask, which waits for the final
// snapshot), the Etcds deployed — etcd-main restores from the copy — and the source entry migrated and
// deleted so that the source's backups stay where they are.
func RestoreShoot(ctx context.Context, env *Env, source MigrationSource) (string, error) {
	restore := map[string]string{extensionsv1alpha1.OperationAnnotation: extensionsv1alpha1.OperationRestore}
	if _, err := createShoot(ctx, env, restore); err != nil {
		return "", err
	}
	sourceEntryName := backupentry.SourcePrefix + env.BackupEntryName
	sourceEntry, err := ensureEntry(ctx, env, sourceEntryName, source.BucketName, nil)
	if err != nil {
		return "", err
	}
	if err := waitExtensionSucceeded(ctx, env, sourceEntry); err != nil {
		return "", err
	}
	copySource := etcd.RestoreSource{BackupEntryName: sourceEntryName, Prefix: source.BackupEntryName + "/" + etcd.Name(etcd.RoleMain)}
	if err := Component(env, etcd.RoleMain).CopyBackups(ctx, copySource); err != nil {
		return "", err
	}
	deployed, err := DeployEtcds(ctx, env)
	if err != nil {
		return "", err
	}
	if err := migrateEntry(ctx, env, sourceEntryName); err != nil {
		return "", err
	}
	if err := deleteEntry(ctx, env, sourceEntryName); err != nil {
		return "", err
	}
	return fmt.Sprintf("copied %s/%s into %s/%s/%s; %s", source.BucketName, copySource.Prefix, env.Bucket(), env.BackupEntryName, etcd.Name(etcd.RoleMain), deployed), nil
}

// migrateEntry asks the extension to migrate a BackupEntry and waits until it did: Migrate succeeded and the
// operation annotation is gone.
func migrateEntry(ctx context.Context, env *Env, name string) error {
	entry := &extensionsv1alpha1.BackupEntry{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, entry); err != nil {
		return fmt.Errorf("reading BackupEntry %s: %w", name, err)
	}
	patch := client.MergeFrom(entry.DeepCopy())
	if entry.Annotations == nil {
		entry.Annotations = map[string]string{}
	}
	entry.Annotations[extensionsv1alpha1.OperationAnnotation] = extensionsv1alpha1.OperationMigrate
	if err := env.Client.Patch(ctx, entry, patch); err != nil {
		return fmt.Errorf("asking for the migration of BackupEntry %s: %w", name, err)
	}
	return poll(ctx, env, "BackupEntry "+name+" migrated", func(ctx context.Context) (string, error) {
		if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, entry); err != nil {
			return "", err
		}
		last := entry.Status.LastOperation
		switch {
		case last == nil || last.Type != extensionsv1alpha1.LastOperationTypeMigrate:
			return "migration not started", nil
		case last.State != extensionsv1alpha1.LastOperationStateSucceeded:
			return fmt.Sprintf("migration %s: %s", last.State, last.Description), nil
		case entry.Annotations[extensionsv1alpha1.OperationAnnotation] != "":
			return "operation annotation still set", nil
		}
		return "", nil
	})
}

// deleteEntry deletes a migrated BackupEntry and waits until it is gone. Migrated, it carries no finalizer,
// so the extension's delete operation — which would remove the entry's backups — never runs; an entry that
// still has the finalizer is refused for that reason.
func deleteEntry(ctx context.Context, env *Env, name string) error {
	entry := &extensionsv1alpha1.BackupEntry{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, entry); err != nil {
		return client.IgnoreNotFound(err)
	}
	if slices.Contains(entry.Finalizers, extensionsv1alpha1.BackupEntryFinalizer) {
		return fmt.Errorf("not deleting BackupEntry %s: it is not migrated, and its deletion would delete its backups", name)
	}
	if err := env.Client.Delete(ctx, entry, client.Preconditions{UID: &entry.UID}); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting BackupEntry %s: %w", name, err)
	}
	return poll(ctx, env, "BackupEntry "+name+" gone", func(ctx context.Context) (string, error) {
		err := env.Client.Get(ctx, client.ObjectKey{Name: name}, entry)
		if apierrors.IsNotFound(err) {
			return "", nil
		}
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("finalizers %v", entry.Finalizers), nil
	})
}
