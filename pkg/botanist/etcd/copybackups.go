package etcd

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupsecret"
)

// RestoreSource is where the main etcd's backups come from in the restore phase of a control-plane migration:
// the source seed's bucket, reached through the `source-` BackupEntry gardenlet creates on the destination
// seed (its extension writes the secret source-etcd-backup).
type RestoreSource struct {
	// ShootName names the EtcdCopyBackupsTask, as gardenlet names it (the Shoot's name): a retried restore,
	// by this project or by gardenlet, finds the task of an earlier attempt under that name.
	ShootName string
	// BackupEntryName is the source entry, `source-<backupEntryName>`.
	BackupEntryName string
	// Prefix is where the source cluster wrote its backups in the source bucket. Empty means Gardener's case:
	// the shoot keeps its BackupEntry name across seeds, so the prefix is the entry name without `source-`
	// followed by /etcd-main. A migration into another namespace (the local seed's end-to-end test) names it.
	Prefix string
	// FinalSnapshotTimeout bounds how long the copy waits for the source's final full snapshot
	// (DefaultFinalSnapshotTimeout when zero). The source seed takes that snapshot before it lets go of the
	// BackupEntry, so by the time the restore runs it is normally there already; the wait only covers a
	// source that is still finishing.
	FinalSnapshotTimeout time.Duration
	// Timeout bounds the whole copy, the wait for the final snapshot included (DefaultCopyBackupsTimeout when
	// zero): a copy of many large snapshots takes longer than any other wait of the component.
	Timeout time.Duration
}

// Defaults of RestoreSource.
const (
	// DefaultFinalSnapshotTimeout is gardenlet's (its copy-backups-task component's DefaultTimeout).
	DefaultFinalSnapshotTimeout = 5 * time.Minute
	DefaultCopyBackupsTimeout   = 30 * time.Minute
)

// LegacyCopyBackupsTaskName is the name earlier versions of this component gave the task
// (`etcd-main-copy-backups`). A leftover of that name is deleted before a copy starts (see CopyBackups).
const LegacyCopyBackupsTaskName = "etcd-main-copy-backups"

// CopyBackups copies the main etcd's backups from the source store into the store of the BackupConfig, as the
// restore phase of a control-plane migration does before the etcd is deployed on the destination seed: an
// EtcdCopyBackupsTask that waits for the source's final full snapshot, run by druid, waited for, then
// deleted. The Etcd deployed next restores what the copy brought over (its sidecar takes the store's newest
// full snapshot by revision, so older snapshots the target prefix may still hold from an earlier stay of the
// shoot on this seed do not count).
//
// Nothing is copied once the Etcd exists: it was deployed after a completed copy (a retried restore flow),
// and from then on its own backups are the newer ones — a second copy could only mix the source's older
// snapshots into them. A failed task is reported and left for inspection; the next call replaces it.
//
// A source store that is the shoot's own store (same provider, bucket and prefix) is an error, as in
// gardenlet: the destination seed would restore from the backups it is about to write itself, which means
// the migration was configured with the wrong bucket; copying nothing silently would hide that.
//
// The task is named after the shoot, as gardenlet names it. A task of the name earlier versions used
// (LegacyCopyBackupsTaskName) is deleted first, and waited for until druid let it go: running, it would copy
// into the same target as the new task; finished or failed, it is of no further use. Interrupting it loses
// nothing — the etcd is not deployed yet and the new task copies again from the untouched source.
func (e *etcd) CopyBackups(ctx context.Context, source RestoreSource) error {
	if e.values.Role != RoleMain || e.values.BackupConfig == nil {
		return fmt.Errorf("only etcd-main with a backup configuration has backups to copy, not %s", e.name())
	}
	if source.ShootName == "" {
		return fmt.Errorf("copying backups into %s/%s: RestoreSource.ShootName is required: it names the EtcdCopyBackupsTask as gardenlet does", e.namespace, e.name())
	}
	existing, err := e.getExisting(ctx)
	if err != nil {
		return err
	}
	if existing != nil {
		e.logger(ctx).Info("Not copying backups: the Etcd exists already and backs up on its own", "sourceEntry", source.BackupEntryName)
		return nil
	}
	task, err := e.copyBackupsTask(ctx, source)
	if err != nil {
		return err
	}
	if druidv1alpha1.SameLocation(task.Spec.SourceStore, task.Spec.TargetStore) {
		return fmt.Errorf("copying backups into %s/%s: the source BackupEntry %s and the shoot's BackupEntry %s back up to the same store %s: the backups were not copied and nothing may be copied onto itself; point the shoot's BackupEntry at the destination seed's bucket",
			e.namespace, e.name(), source.BackupEntryName, e.values.BackupConfig.BackupEntryName, describeStore(task.Spec.TargetStore))
	}
	if err := e.deleteLegacyCopyTask(ctx); err != nil {
		return err
	}
	if err := e.startCopy(ctx, task); err != nil {
		return err
	}
	if err := e.waitCopied(ctx, task, source); err != nil {
		return err
	}
	if err := e.client.Delete(ctx, task); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting the finished EtcdCopyBackupsTask %s/%s: %w", task.Namespace, task.Name, err)
	}
	e.logger(ctx).Info("Copied backups from the source store", "from", describeStore(task.Spec.SourceStore), "to", describeStore(task.Spec.TargetStore))
	return nil
}

// copyBackupsTask builds the task from both BackupEntries and their secrets; it returns a
// *MissingSecretError while either secret (or its bucket name) is missing.
func (e *etcd) copyBackupsTask(ctx context.Context, source RestoreSource) (*druidv1alpha1.EtcdCopyBackupsTask, error) {
	target, err := e.waitForBackupEntry(ctx, e.values.BackupConfig)
	if err != nil {
		return nil, err
	}
	from, err := e.waitForBackupEntry(ctx, &BackupConfig{BackupEntryName: source.BackupEntryName})
	if err != nil {
		return nil, err
	}
	if source.Prefix != "" {
		from.prefix = source.Prefix
	}
	reqs := []secretRequirement{backupSecretRequirement(target.secretRef.Name, target.provider), backupSecretRequirement(from.secretRef.Name, from.provider)}
	secrets, err := e.checkSecrets(ctx, reqs)
	if err != nil {
		return nil, err
	}
	storeSpec := func(s backupStore) druidv1alpha1.StoreSpec {
		spec := s.storeSpec()
		spec.Container = ptr.To(string(secrets[s.secretRef.Name].Data[backupsecret.KeyBucketName]))
		return *spec
	}
	timeout := source.FinalSnapshotTimeout
	if timeout == 0 {
		timeout = DefaultFinalSnapshotTimeout
	}
	return &druidv1alpha1.EtcdCopyBackupsTask{
		ObjectMeta: metav1.ObjectMeta{Name: source.ShootName, Namespace: e.namespace},
		Spec: druidv1alpha1.EtcdCopyBackupsTaskSpec{
			SourceStore:          storeSpec(from),
			TargetStore:          storeSpec(target),
			WaitForFinalSnapshot: &druidv1alpha1.WaitForFinalSnapshotSpec{Enabled: true, Timeout: &metav1.Duration{Duration: timeout}},
			// Gardener's labels for the worker (DNS and public stores), plus private networks, where a store
			// may be too (the members have that label as well): a Gardener seed's policies deny the rest.
			PodLabels: map[string]string{labelToDNS: labelAllowed, labelToPublicNetworks: labelAllowed, labelToPrivateNets: labelAllowed},
		},
	}, nil
}

// deleteLegacyCopyTask deletes a task of LegacyCopyBackupsTaskName and waits until it is gone (druid's
// finalizer deletes its worker Job first).
func (e *etcd) deleteLegacyCopyTask(ctx context.Context) error {
	legacy := &druidv1alpha1.EtcdCopyBackupsTask{}
	err := e.client.Get(ctx, client.ObjectKey{Namespace: e.namespace, Name: LegacyCopyBackupsTaskName}, legacy)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading EtcdCopyBackupsTask %s/%s: %w", e.namespace, LegacyCopyBackupsTaskName, err)
	}
	e.logger(ctx).Info("Deleting the EtcdCopyBackupsTask of the name earlier versions used", "task", legacy.Name, "failure", copyFailed(legacy), "succeeded", copySucceeded(legacy))
	if err := e.client.Delete(ctx, legacy); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting EtcdCopyBackupsTask %s/%s: %w", e.namespace, legacy.Name, err)
	}
	return e.waitGone(ctx, legacy)
}

// startCopy creates the task. One that exists already with the same spec is kept while it runs or succeeded
// (a retried flow waits for it); one that failed, or finished with another spec (an earlier attempt from
// another source), is replaced, which starts the copy again. A running copy of another spec is not
// interrupted: the call fails and a later one decides again.
func (e *etcd) startCopy(ctx context.Context, task *druidv1alpha1.EtcdCopyBackupsTask) error {
	existing := &druidv1alpha1.EtcdCopyBackupsTask{}
	err := e.client.Get(ctx, client.ObjectKeyFromObject(task), existing)
	sameSpec := err == nil && equality.Semantic.DeepEqual(existing.Spec, task.Spec)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return fmt.Errorf("reading EtcdCopyBackupsTask %s/%s: %w", task.Namespace, task.Name, err)
	case existing.DeletionTimestamp == nil && copyFailed(existing) == "" && sameSpec:
		*task = *existing
		return nil
	case existing.DeletionTimestamp == nil && copyFailed(existing) == "" && !copySucceeded(existing):
		return fmt.Errorf("EtcdCopyBackupsTask %s/%s copies from %s into %s, not from %s: it is still running; not replacing it",
			task.Namespace, task.Name, describeStore(existing.Spec.SourceStore), describeStore(existing.Spec.TargetStore), describeStore(task.Spec.SourceStore))
	default:
		e.logger(ctx).Info("Replacing a failed, finished or terminating EtcdCopyBackupsTask", "task", task.Name, "failure", copyFailed(existing), "sameSpec", sameSpec)
		// druid's finalizer on the task deletes the worker Job before it lets the task go, so once the task is
		// gone the new one's Job name is free.
		if err := e.client.Delete(ctx, existing); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting the failed EtcdCopyBackupsTask %s/%s: %w", task.Namespace, task.Name, err)
		}
		if err := e.waitGone(ctx, existing); err != nil {
			return err
		}
	}
	if err := e.client.Create(ctx, task); err != nil {
		return fmt.Errorf("creating EtcdCopyBackupsTask %s/%s: %w", task.Namespace, task.Name, err)
	}
	return nil
}

// waitCopied waits until druid reports the task Succeeded; a Failed task ends the wait with druid's error.
func (e *etcd) waitCopied(ctx context.Context, task *druidv1alpha1.EtcdCopyBackupsTask, source RestoreSource) error {
	timeout := source.Timeout
	if timeout == 0 {
		timeout = DefaultCopyBackupsTimeout
	}
	state := "druid has not reported on it yet"
	err := wait.PollUntilContextTimeout(ctx, e.values.WaitInterval, timeout, true, func(ctx context.Context) (bool, error) {
		err := e.client.Get(ctx, client.ObjectKeyFromObject(task), task)
		switch {
		case apierrors.IsNotFound(err):
			return false, fmt.Errorf("EtcdCopyBackupsTask %s/%s was deleted before it finished", task.Namespace, task.Name)
		case err != nil:
			state = "reading it failed: " + err.Error()
			return false, nil
		}
		if failure := copyFailed(task); failure != "" {
			return false, fmt.Errorf("copying backups into %s/%s failed: %s", e.namespace, e.name(), failure)
		}
		if copySucceeded(task) {
			return true, nil
		}
		if c := druidv1alpha1.FindCondition(task.Status.Conditions, druidv1alpha1.EtcdCopyBackupsTaskSucceeded); c != nil {
			state = fmt.Sprintf("Succeeded is %s: %s", c.Status, c.Message)
		}
		return false, nil
	})
	if err != nil && ctx.Err() == nil && wait.Interrupted(err) {
		return fmt.Errorf("EtcdCopyBackupsTask %s/%s not done after %s: %s", task.Namespace, task.Name, timeout, state)
	}
	return err
}

// copySucceeded tells whether druid reported the copy done.
func copySucceeded(task *druidv1alpha1.EtcdCopyBackupsTask) bool {
	c := druidv1alpha1.FindCondition(task.Status.Conditions, druidv1alpha1.EtcdCopyBackupsTaskSucceeded)
	return c != nil && c.Status == druidv1alpha1.ConditionTrue
}

// copyFailed is druid's error when the task failed, or "".
func copyFailed(task *druidv1alpha1.EtcdCopyBackupsTask) string {
	c := druidv1alpha1.FindCondition(task.Status.Conditions, druidv1alpha1.EtcdCopyBackupsTaskFailed)
	if c == nil || c.Status != druidv1alpha1.ConditionTrue {
		return ""
	}
	if task.Status.LastError != nil {
		return *task.Status.LastError
	}
	return c.Message
}

// waitGone waits until obj no longer exists.
func (e *etcd) waitGone(ctx context.Context, obj client.Object) error {
	err := wait.PollUntilContextTimeout(ctx, e.values.WaitInterval, e.values.WaitTimeout, true, func(ctx context.Context) (bool, error) {
		err := e.client.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		return fmt.Errorf("waiting until %s/%s is gone: %w", obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}

func describeStore(s druidv1alpha1.StoreSpec) string {
	return ptr.Deref(s.Container, "") + "/" + s.Prefix
}
