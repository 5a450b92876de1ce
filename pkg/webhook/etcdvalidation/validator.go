// Package etcdvalidation is druid's validating webhook for Etcd, EtcdCopyBackupsTask and EtcdOpsTask. It runs the same
// validation library as the Gardener side (pkg/apis/druid/v1alpha1/validation), so rules the CRD schema
// cannot express — cron syntax, label syntax, name lengths — are enforced at admission too, with messages
// that name the field and say what is allowed.
package etcdvalidation

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1/validation"
)

// EtcdValidator admits Etcds that pass validation.ValidateEtcd (and ValidateEtcdUpdate on updates).
type EtcdValidator struct{}

var _ admission.Validator[*druidv1alpha1.Etcd] = EtcdValidator{}

// ValidateCreate checks a new Etcd.
func (EtcdValidator) ValidateCreate(_ context.Context, etcd *druidv1alpha1.Etcd) (admission.Warnings, error) {
	return EtcdWarnings(etcd), invalid("Etcd", etcd.Name, EtcdErrors(etcd, nil))
}

// ValidateUpdate checks an updated Etcd, including its immutable fields. It ratchets: only the fields that
// changed are judged (validation.Ratchet), so an Etcd stored with a value that create would refuse — one
// written for upstream etcd-druid, or before a rule was added — still takes unrelated updates. An Etcd
// that is being deleted is let through so that removing finalizers never gets stuck.
func (EtcdValidator) ValidateUpdate(_ context.Context, oldEtcd, newEtcd *druidv1alpha1.Etcd) (admission.Warnings, error) {
	if newEtcd.DeletionTimestamp != nil {
		return nil, nil
	}
	return EtcdWarnings(newEtcd), invalid("Etcd", newEtcd.Name, EtcdErrors(newEtcd, oldEtcd))
}

// ValidateDelete allows every deletion: the deletion flow is what protects data (final snapshot, finalizers).
func (EtcdValidator) ValidateDelete(context.Context, *druidv1alpha1.Etcd) (admission.Warnings, error) {
	return nil, nil
}

// EtcdErrors are the webhook's refusals of etcd: validation.ValidateEtcd on create (old nil),
// validation.ValidateEtcdUpdate against old on update, and secret references into other namespaces. The
// Etcd reconciler runs the same checks against the spec it last applied, for deployments that register no
// validation webhook.
func EtcdErrors(etcd, old *druidv1alpha1.Etcd) field.ErrorList {
	if old == nil {
		return append(validation.ValidateEtcd(etcd), foreignSecretRefs(etcd, nil)...)
	}
	return append(validation.ValidateEtcdUpdate(etcd, old), foreignSecretRefs(etcd, old)...)
}

// CopyTaskErrors are the webhook's refusals of a new copy task (the copy task reconciler runs them too).
func CopyTaskErrors(task *druidv1alpha1.EtcdCopyBackupsTask) field.ErrorList {
	return append(validation.ValidateEtcdCopyBackupsTask(task), foreignCopyTaskSecretRefs(task, nil)...)
}

// EtcdWarnings points out settings that are accepted but probably not what the user wants.
func EtcdWarnings(etcd *druidv1alpha1.Etcd) admission.Warnings {
	var warnings admission.Warnings
	if etcd.Spec.Selector != nil {
		warnings = append(warnings, "spec.selector is deprecated and ignored: the pods are selected by the labels app.kubernetes.io/managed-by and app.kubernetes.io/part-of")
	}
	if etcd.Spec.Replicas > 1 && etcd.Spec.Etcd.PeerUrlTLS == nil {
		warnings = append(warnings, "spec.etcd.peerUrlTls is not set: the members of this multi-node cluster talk to each other without TLS")
	}
	if etcd.Spec.Backup.Store == nil && etcd.Spec.Replicas > 0 {
		warnings = append(warnings, "spec.backup.store is not set: this cluster has no backups and cannot recover from a loss of quorum")
	}
	if w := validation.EvenReplicasWarning(etcd.Spec.Replicas); w != "" {
		warnings = append(warnings, w)
	}
	warnings = append(warnings, validation.StoreWarnings(etcd.Spec.Backup.Store, field.NewPath("spec", "backup", "store"))...)
	warnings = append(warnings, validation.EtcdWarnings(etcd)...)
	return warnings
}

// CopyBackupsTaskValidator admits EtcdCopyBackupsTasks that pass validation.ValidateEtcdCopyBackupsTask.
type CopyBackupsTaskValidator struct{}

var _ admission.Validator[*druidv1alpha1.EtcdCopyBackupsTask] = CopyBackupsTaskValidator{}

// ValidateCreate checks a new copy task.
func (CopyBackupsTaskValidator) ValidateCreate(_ context.Context, task *druidv1alpha1.EtcdCopyBackupsTask) (admission.Warnings, error) {
	return validation.CopyTaskWarnings(task), invalid("EtcdCopyBackupsTask", task.Name, CopyTaskErrors(task))
}

// ValidateUpdate checks an updated copy task.
func (CopyBackupsTaskValidator) ValidateUpdate(_ context.Context, oldTask, task *druidv1alpha1.EtcdCopyBackupsTask) (admission.Warnings, error) {
	if task.DeletionTimestamp != nil {
		return nil, nil
	}
	errs := append(validation.Ratchet(validation.ValidateEtcdCopyBackupsTask(task), task, oldTask), foreignCopyTaskSecretRefs(task, oldTask)...)
	return validation.CopyTaskWarnings(task), invalid("EtcdCopyBackupsTask", task.Name, errs)
}

// ValidateDelete allows every deletion.
func (CopyBackupsTaskValidator) ValidateDelete(context.Context, *druidv1alpha1.EtcdCopyBackupsTask) (admission.Warnings, error) {
	return nil, nil
}

// OpsTaskValidator admits EtcdOpsTasks that pass validation.ValidateEtcdOpsTask: one operation this druid
// runs (onDemandSnapshot), an Etcd named; a final full snapshot only of an Etcd that declares its clients
// stopped (validation.ValidateEtcdOpsTaskForEtcd); on updates the spec is immutable.
type OpsTaskValidator struct {
	// Reader reads the task's Etcd from the apiserver.
	Reader client.Reader
}

var _ admission.Validator[*druidv1alpha1.EtcdOpsTask] = OpsTaskValidator{}

// ValidateCreate checks a new ops task. An Etcd that does not exist is left to the controller, which
// rejects the task in its status; an Etcd that cannot be read refuses a final snapshot task.
func (v OpsTaskValidator) ValidateCreate(ctx context.Context, task *druidv1alpha1.EtcdOpsTask) (admission.Warnings, error) {
	errs := validation.ValidateEtcdOpsTask(task)
	if s := task.Spec.Config.OnDemandSnapshot; len(errs) == 0 && s != nil && ptr.Deref(s.IsFinal, false) {
		etcd := &druidv1alpha1.Etcd{}
		err := v.Reader.Get(ctx, client.ObjectKey{Namespace: task.Namespace, Name: *task.Spec.EtcdName}, etcd)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return nil, apierrors.NewInternalError(fmt.Errorf("reading Etcd %s/%s to judge spec.config.onDemandSnapshot.isFinal: %w", task.Namespace, *task.Spec.EtcdName, err))
		default:
			errs = validation.ValidateEtcdOpsTaskForEtcd(task, etcd)
		}
	}
	return nil, invalid("EtcdOpsTask", task.Name, errs)
}

// ValidateUpdate checks an updated ops task: the spec must not change; what the task already stored is not
// judged again (a task an upstream druid accepted can still lose its finalizer).
func (OpsTaskValidator) ValidateUpdate(_ context.Context, oldTask, task *druidv1alpha1.EtcdOpsTask) (admission.Warnings, error) {
	if task.DeletionTimestamp != nil {
		return nil, nil
	}
	errs := append(validation.ValidateEtcdOpsTaskUpdate(task, oldTask), validation.Ratchet(validation.ValidateEtcdOpsTask(task), task, oldTask)...)
	return nil, invalid("EtcdOpsTask", task.Name, errs)
}

// ValidateDelete allows every deletion.
func (OpsTaskValidator) ValidateDelete(context.Context, *druidv1alpha1.EtcdOpsTask) (admission.Warnings, error) {
	return nil, nil
}

// invalid turns field errors into the apiserver's 422 Invalid status, which kubectl prints field by field.
func invalid(kind, name string, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(druidv1alpha1.SchemeGroupVersion.WithKind(kind).GroupKind(), name, errs)
}
