package seedworkflow

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	clientv3 "go.etcd.io/etcd/client/v3"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/controller/backupentry"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/operation"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
)

// MigrationSource is what the destination of a control-plane migration needs to know about the source: the
// BackupEntry the source cluster backed up under and the bucket it wrote to.
type MigrationSource struct {
	BackupEntryName string
	BucketName      string
}

// MigrateShoot is the source seed's part of a control-plane migration, in gardenlet's order: a hibernated
// etcd-main woken up (WakeForFinalSnapshot), a final full snapshot of etcd-main (the caller stopped every
// writer first, as gardenlet scales kube-apiserver down), the BackupEntry migrated (the extension lets go of it and keeps the backups), both Etcds destroyed, and
// the migrated entry deleted, which leaves the bucket untouched. druid keeps the members' volumes, so the
// source namespace still holds the data until whoever owns the namespace deletes it.
//
// Before anything is destroyed, the cluster's revision is compared with the final snapshot's: a write
// acknowledged after the snapshot would be in no backup (the next delta is minutes away), so the migration
// stops there with the source intact. Each step is skipped when a previous run did it, so a migration that
// failed halfway is finished by running it again.
func MigrateShoot(ctx context.Context, env *Env) (MigrationSource, string, error) {
	source := MigrationSource{BackupEntryName: env.BackupEntryName, BucketName: env.Bucket()}
	main := Component(env, etcd.RoleMain)
	entry, err := getEntry(ctx, env, env.BackupEntryName)
	if err != nil {
		return source, "", err
	}
	snapshot := "taken by an earlier run"
	if entry == nil {
		// This flow deletes the entry only after the Etcds are gone; an etcd-main without its entry was never
		// migrated by it, and destroying it would go without a final snapshot.
		if _, err := main.Get(ctx); !apierrors.IsNotFound(err) {
			return source, "", fmt.Errorf("BackupEntry %s does not exist but etcd-main does (read error: %v): refusing to destroy it without a final snapshot", env.BackupEntryName, err)
		}
	}
	if entry != nil && !isMigrated(entry) {
		woke, err := WakeForFinalSnapshot(ctx, env)
		if err != nil {
			return source, "", err
		}
		if woke {
			if err := main.Wait(ctx); err != nil {
				return source, "", fmt.Errorf("waiting for the woken etcd-main: %w", err)
			}
			if err := WaitMembers(ctx, env, etcd.RoleMain, int(env.members()), env.members() > 1); err != nil {
				return source, "", err
			}
		}
		if snapshot, err = finalSnapshot(ctx, env, main); err != nil {
			return source, "", err
		}
		if err := migrateEntry(ctx, env, env.BackupEntryName); err != nil {
			return source, "", err
		}
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
	return source, fmt.Sprintf("final snapshot %s; BackupEntry %s migrated and deleted, backups kept in bucket %s", snapshot, source.BackupEntryName, source.BucketName), nil
}

// finalSnapshot takes the final full snapshot and checks that etcd holds no revision beyond it.
func finalSnapshot(ctx context.Context, env *Env, main etcd.Interface) (string, error) {
	answer, err := main.Snapshot(ctx)
	if err != nil {
		return "", fmt.Errorf("final full snapshot: %w", err)
	}
	var taken snapshot.Snapshot
	if err := json.Unmarshal([]byte(answer), &taken); err != nil {
		return "", fmt.Errorf("reading the final snapshot's answer %q: %w", answer, err)
	}
	cli, err := EtcdClient(ctx, env, etcd.RoleMain)
	if err != nil {
		return "", err
	}
	defer cli.Close()
	resp, err := cli.Get(ctx, "/", clientv3.WithCountOnly()) // linearizable: the cluster's current revision
	if err != nil {
		return "", fmt.Errorf("reading etcd-main's revision after the final snapshot: %w", err)
	}
	if resp.Header.Revision != taken.LastRevision {
		return "", fmt.Errorf("etcd-main is at revision %d, its final snapshot %s at %d: something still writes (a client, or keys whose leases expired); stop every client and migrate again (nothing was destroyed)",
			resp.Header.Revision, taken.SnapName, taken.LastRevision)
	}
	return taken.SnapName + fmt.Sprintf(" at revision %d", taken.LastRevision), nil
}

// RestoreShoot is the destination seed's part of a control-plane migration: the shoot's namespace, bucket and
// BackupEntry (with gardenlet's restore operation), the `source-` BackupEntry on the source's bucket, the
// copy of the source's backups into the shoot's store (EtcdCopyBackupsTask, which waits for the final
// snapshot), the Etcds deployed (RestoreEtcds: a highly available shoot's through one member, then scaled
// up) — etcd-main restores from the copy — and the source entry migrated and deleted so that the source's
// backups stay where they are. The copy task is named after the shoot (Env.ShootName), as gardenlet names it.
func RestoreShoot(ctx context.Context, env *Env, source MigrationSource) (string, error) {
	restore := map[string]string{extensionsv1alpha1.OperationAnnotation: extensionsv1alpha1.OperationRestore}
	if _, err := createShoot(ctx, env, restore); err != nil {
		return "", err
	}
	sourceEntryName := backupentry.SourcePrefix + env.BackupEntryName
	copySource := etcd.RestoreSource{ShootName: env.ShootName(), BackupEntryName: sourceEntryName, Prefix: source.BackupEntryName + "/" + etcd.Name(etcd.RoleMain)}
	main := Component(env, etcd.RoleMain)
	if _, err := main.Get(ctx); apierrors.IsNotFound(err) {
		// Not deployed yet, so not copied yet either (a run that got further deployed it after the copy).
		sourceEntry, err := ensureEntry(ctx, env, sourceEntryName, source.BucketName, nil)
		if err != nil {
			return "", err
		}
		if err := waitExtensionSucceeded(ctx, env, sourceEntry); err != nil {
			return "", err
		}
		if err := main.CopyBackups(ctx, copySource); err != nil {
			return "", err
		}
	} else if err != nil {
		return "", err
	}
	deployed, err := RestoreEtcds(ctx, env)
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

// getEntry reads a BackupEntry, nil when it does not exist.
func getEntry(ctx context.Context, env *Env, name string) (*extensionsv1alpha1.BackupEntry, error) {
	entry := &extensionsv1alpha1.BackupEntry{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, entry); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading BackupEntry %s: %w", name, err)
	}
	return entry, nil
}

// isMigrated tells whether the extension migrated the entry and acknowledged the request.
func isMigrated(entry *extensionsv1alpha1.BackupEntry) bool {
	return operation.IsMigrated(&entry.Status.DefaultStatus) && entry.Annotations[extensionsv1alpha1.OperationAnnotation] == ""
}

// migrateEntry asks the extension to migrate a BackupEntry and waits until it did: Migrate succeeded and the
// operation annotation is gone. An entry that is gone or migrated already is done.
func migrateEntry(ctx context.Context, env *Env, name string) error {
	entry, err := getEntry(ctx, env, name)
	if err != nil || entry == nil || isMigrated(entry) {
		return err
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
		if isMigrated(entry) {
			return "", nil
		}
		if last := entry.Status.LastOperation; last != nil && last.Type == extensionsv1alpha1.LastOperationTypeMigrate {
			return fmt.Sprintf("migration %s: %s", last.State, last.Description), nil
		}
		return "migration not started", nil
	})
}

// deleteEntry deletes a migrated BackupEntry and waits until it is gone. Migrated, it carries no finalizer,
// so the extension's delete operation — which would remove the entry's backups — never runs; an entry that
// still has the finalizer is refused for that reason.
func deleteEntry(ctx context.Context, env *Env, name string) error {
	entry, err := getEntry(ctx, env, name)
	if err != nil || entry == nil {
		return err
	}
	if slices.Contains(entry.Finalizers, extensionsv1alpha1.BackupEntryFinalizer) {
		return fmt.Errorf("not deleting BackupEntry %s: it is not migrated, and its deletion would delete its backups", name)
	}
	if err := env.Client.Delete(ctx, entry, client.Preconditions{UID: &entry.UID, ResourceVersion: &entry.ResourceVersion}); client.IgnoreNotFound(err) != nil {
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

// WakeForFinalSnapshot scales a hibernated etcd-main (spec.replicas 0) up to the size it had
// (hibernatedClusterSize) so that it can take the final full snapshot, as gardenlet's migration flow scales etcd up first. Druid's snapshot before
// hibernation does not replace it: it is not final, and a cluster that was not quorate, or whose sidecar
// refused druid, hibernated without one. It returns whether it scaled; it does not wait.
func WakeForFinalSnapshot(ctx context.Context, env *Env) (bool, error) {
	main := Component(env, etcd.RoleMain)
	obj, err := main.Get(ctx)
	if err != nil {
		return false, fmt.Errorf("reading etcd-main before its final snapshot: %w", err)
	}
	if obj.Spec.Replicas != 0 {
		return false, nil
	}
	members, err := hibernatedClusterSize(ctx, env, obj)
	if err != nil {
		return false, err
	}
	if err := main.Scale(ctx, members); err != nil {
		return false, fmt.Errorf("waking the hibernated etcd-main for its final snapshot: %w", err)
	}
	return true, nil
}

// hibernatedClusterSize is the number of members a hibernated Etcd had: the cluster size druid records on
// its StatefulSet (druidv1alpha1.ClusterSizeAnnotation, kept while at 0), else the flow's member count.
// Waking fewer members than the cluster had would leave them without a quorum.
func hibernatedClusterSize(ctx context.Context, env *Env, obj *druidv1alpha1.Etcd) (int32, error) {
	sts := &appsv1.StatefulSet{}
	err := env.Client.Get(ctx, client.ObjectKey{Namespace: obj.Namespace, Name: druidv1alpha1.StatefulSetName(obj)}, sts)
	if client.IgnoreNotFound(err) != nil {
		return 0, fmt.Errorf("reading the StatefulSet of the hibernated etcd-main: %w", err)
	}
	if size, ok := druidv1alpha1.AnnotatedClusterSize(sts.Annotations); err == nil && ok {
		return size, nil
	}
	return env.members(), nil
}
