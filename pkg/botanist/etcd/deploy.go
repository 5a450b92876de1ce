package etcd

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1/validation"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupsecret"
)

// ConfirmDeletionAnnotation is Gardener's confirmation that an object protected against accidental deletion
// may be deleted; Destroy sets it so that deletion protection lets the Etcd go.
const ConfirmDeletionAnnotation = "confirmation.gardener.cloud/deletion"

// Deploy retries on write conflicts: druid updates the status all the time, and the optimistic lock of the
// patch would otherwise fail many Deploys for no reason.
func (e *etcd) Deploy(ctx context.Context) error {
	return retry.RetryOnConflict(retry.DefaultBackoff, func() error { return e.deploy(ctx) })
}

func (e *etcd) deploy(ctx context.Context) error {
	log := e.logger(ctx)
	existing, err := e.getExisting(ctx)
	if err != nil {
		return err
	}
	p := plan{replicas: e.desiredReplicas(existing)}
	if p.trafficDistribution, err = e.values.trafficDistribution(); err != nil {
		return err
	}
	p.peerTLS = needsPeerTLS(existing, e.values.HighAvailability, p.replicas)
	if p.tls, err = e.tlsSecretRefs(ctx, p.peerTLS); err != nil {
		return err
	}
	store, err := e.backupStore(ctx, existing)
	if err != nil {
		return err
	}
	secrets, err := e.checkSecrets(ctx, requiredSecrets(p.tls, store))
	if err != nil {
		return err
	}
	if err := e.checkPeerCertificateTrusted(ctx, existing, p.tls, secrets); err != nil {
		return err
	}
	if store != nil {
		store.Container = ptr.To(string(secrets[store.SecretRef.Name].Data[backupsecret.KeyBucketName]))
	}
	p.store = store
	if p.peerTLS {
		p.peerTLSChecksum = e.peerTLSChecksum(p.tls, secrets)
	}
	if p.defragmentation, p.fullSnapshot, err = e.schedules(existing); err != nil {
		return err
	}
	if err := e.write(ctx, existing, e.build(existing, p)); err != nil {
		return err
	}
	if err := e.reconcileVPA(ctx); err != nil {
		return err
	}
	if err := e.reconcileMonitoring(ctx, p.replicas, store != nil); err != nil {
		return err
	}
	log.Info("Deployed Etcd", "replicas", p.replicas, "peerTLS", p.peerTLS, "backup", store != nil)
	return nil
}

// backupStore is the store to write: from the BackupEntry when a backup config is set, otherwise the one
// already on the object (a Deploy without backup config must not switch backups off). Only the main etcd is
// backed up.
func (e *etcd) backupStore(ctx context.Context, existing *druidv1alpha1.Etcd) (*druidv1alpha1.StoreSpec, error) {
	if e.values.Role != RoleMain {
		return nil, nil
	}
	if cfg := e.values.BackupConfig; cfg != nil {
		s, err := e.waitForBackupEntry(ctx, cfg)
		if err != nil {
			return nil, err
		}
		return s.storeSpec(), nil
	}
	if existing != nil && existing.Spec.Backup.Store != nil {
		return existing.Spec.Backup.Store.DeepCopy(), nil
	}
	return nil, nil
}

func storeSecretName(store *druidv1alpha1.StoreSpec) string {
	if store == nil || store.SecretRef == nil {
		return ""
	}
	return store.SecretRef.Name
}

// schedules follow Gardener's rule: what an existing Etcd has stays, even against Values (an operator may
// have moved it, and a moved full snapshot must not jump), except a defragmentation every N days, the old
// default, which gives way to the daily one; a new Etcd takes the Values, else a slot in the maintenance
// window.
func (e *etcd) schedules(existing *druidv1alpha1.Etcd) (defragmentation, fullSnapshot string, err error) {
	window := DefaultMaintenanceWindow
	if e.values.MaintenanceWindow != nil {
		window = *e.values.MaintenanceWindow
	}
	defragmentation, fullSnapshot, err = derivedSchedules(window, e.namespace, e.values.Role)
	if err != nil {
		return "", "", err
	}
	if e.values.DefragmentationSchedule != nil {
		defragmentation = *e.values.DefragmentationSchedule
	}
	if e.values.FullSnapshotSchedule != nil {
		fullSnapshot = *e.values.FullSnapshotSchedule
	}
	if existing != nil && existing.Spec.Etcd.DefragmentationSchedule != nil && !everyNDays(*existing.Spec.Etcd.DefragmentationSchedule) {
		defragmentation = *existing.Spec.Etcd.DefragmentationSchedule
	}
	if existing != nil && existing.Spec.Backup.FullSnapshotSchedule != nil {
		fullSnapshot = *existing.Spec.Backup.FullSnapshotSchedule
	}
	return defragmentation, fullSnapshot, nil
}

// write validates the Etcd and creates it, or patches the existing one (optimistically locked, so a
// concurrent writer makes this Deploy fail and retry rather than being overwritten), always with the
// operation annotation that asks druid to reconcile.
func (e *etcd) write(ctx context.Context, existing, desired *druidv1alpha1.Etcd) error {
	metav1.SetMetaDataAnnotation(&desired.ObjectMeta, druidv1alpha1.GardenerOperationAnnotation, druidv1alpha1.OperationReconcile)
	metav1.SetMetaDataAnnotation(&desired.ObjectMeta, druidv1alpha1.GardenerTimestampAnnotation, e.values.Clock().UTC().Format(time.RFC3339))
	if existing == nil {
		if errs := validation.ValidateEtcd(desired); len(errs) > 0 {
			return fmt.Errorf("refusing to write an invalid Etcd %s/%s: %w", e.namespace, e.name(), errs.ToAggregate())
		}
		if err := e.client.Create(ctx, desired); err != nil {
			return fmt.Errorf("creating Etcd %s/%s: %w", e.namespace, e.name(), err)
		}
		return nil
	}
	if errs := validation.ValidateEtcdUpdate(desired, existing); len(errs) > 0 {
		return fmt.Errorf("refusing to write an invalid Etcd %s/%s: %w", e.namespace, e.name(), errs.ToAggregate())
	}
	patch := client.MergeFromWithOptions(existing, client.MergeFromWithOptimisticLock{})
	if err := e.client.Patch(ctx, desired, patch); err != nil {
		return fmt.Errorf("patching Etcd %s/%s: %w", e.namespace, e.name(), err)
	}
	return nil
}

// Scale sets the member count. The API admits even counts (Etcds written for upstream druid may have
// them), but the Gardener side never asks for one: an even count tolerates no more failures than the odd
// count below it, and Gardener runs etcd with 1 or 3 members.
func (e *etcd) Scale(ctx context.Context, replicas int32) error {
	if replicas > 0 && replicas%2 == 0 {
		return fmt.Errorf("cannot scale %s/%s: spec.replicas %d is even; %d members tolerate no more failures than %d", e.namespace, e.name(), replicas, replicas, replicas-1)
	}
	return retry.RetryOnConflict(retry.DefaultBackoff, func() error { return e.scale(ctx, replicas) })
}

func (e *etcd) scale(ctx context.Context, replicas int32) error {
	existing, err := e.getExisting(ctx)
	if err != nil {
		return err
	}
	if existing == nil {
		return fmt.Errorf("cannot scale %s/%s: it does not exist, deploy it first", e.namespace, e.name())
	}
	// As gardenlet's Scale: a change druid has not reconciled yet is not piled onto (Wait first).
	if op, pending := existing.Annotations[druidv1alpha1.GardenerOperationAnnotation]; pending {
		return fmt.Errorf("cannot scale %s/%s yet: annotation %q is still set (%q), druid has not reconciled the last change; wait for it first",
			e.namespace, e.name(), druidv1alpha1.GardenerOperationAnnotation, op)
	}
	desired := existing.DeepCopy()
	desired.Spec.Replicas = replicas
	desired.Spec.SchedulingConstraints.TopologySpreadConstraints = spreadConstraints(existing, desired, replicas, e.values.Zones, e.values.FailureToleranceType)
	if peerTLS := needsPeerTLS(existing, false, replicas); peerTLS {
		refs, err := e.tlsSecretRefs(ctx, true)
		if err != nil {
			return err
		}
		secrets, err := e.checkSecrets(ctx, requiredSecrets(refs, existing.Spec.Backup.Store))
		if err != nil {
			return err
		}
		if err := e.checkPeerCertificateTrusted(ctx, existing, refs, secrets); err != nil {
			return err
		}
		e.setPeerTLS(desired, true, refs, e.peerTLSChecksum(refs, secrets))
	}
	if err := e.write(ctx, existing, desired); err != nil {
		return err
	}
	e.logger(ctx).Info("Scaled Etcd", "from", existing.Spec.Replicas, "to", replicas)
	return nil
}

func (e *etcd) Destroy(ctx context.Context) error {
	if err := e.deleteVPA(ctx); err != nil {
		return err
	}
	if err := e.deleteMonitoring(ctx); err != nil {
		return err
	}
	existing, err := e.getExisting(ctx)
	if err != nil || existing == nil {
		return err
	}
	if existing.Annotations[ConfirmDeletionAnnotation] != "true" {
		patch := client.MergeFrom(existing.DeepCopy())
		metav1.SetMetaDataAnnotation(&existing.ObjectMeta, ConfirmDeletionAnnotation, "true")
		if err := e.client.Patch(ctx, existing, patch); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("confirming the deletion of Etcd %s/%s: %w", e.namespace, e.name(), err)
		}
	}
	if err := e.client.Delete(ctx, existing); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting Etcd %s/%s: %w", e.namespace, e.name(), err)
	}
	e.logger(ctx).Info("Deleted Etcd")
	return nil
}
