package validation_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1/validation"
)

// The container rule applies only to Local stores, so a container the Etcd kept is judged again when
// the provider becomes another one: "../x" is a fine S3 bucket name but would mount another node
// directory as a Local container.
func TestProviderChangeToLocalJudgesTheKeptContainer(t *testing.T) {
	old := with(validEtcd(), localContainer(druidv1alpha1.StorageProviderS3, "../x"))
	moved := with(old.DeepCopy(), func(e *druidv1alpha1.Etcd) { e.Spec.Backup.Store.Provider = ptr.To(druidv1alpha1.StorageProviderLocal) })
	expectSingleError(t, validation.ValidateEtcdUpdate(moved, old), "spec.backup.store.container", field.ErrorTypeInvalid, "one path segment")

	task := validCopyTask()
	task.Spec.SourceStore.Container = ptr.To("../x")
	movedTask := task.DeepCopy()
	movedTask.Spec.SourceStore.Provider = ptr.To(druidv1alpha1.StorageProvider("local"))
	expectSingleError(t, validation.Ratchet(validation.ValidateEtcdCopyBackupsTask(movedTask), movedTask, task),
		"spec.sourceStore.container", field.ErrorTypeInvalid, "one path segment")
}

// A stored Local container from before the rule stays updatable while the provider stays Local in any
// spelling: the runtime refuses to mount it, and the owner must be able to change other fields meanwhile.
func TestKeptLocalContainerRatchetsWhileTheProviderStaysLocal(t *testing.T) {
	old := with(validEtcd(), localContainer(druidv1alpha1.StorageProviderLocal, "../x"))
	for name, mutate := range map[string]func(*druidv1alpha1.Etcd){
		"unrelated field": func(e *druidv1alpha1.Etcd) { e.Spec.Labels = map[string]string{"a": "b"} },
		"provider alias": func(e *druidv1alpha1.Etcd) {
			e.Spec.Backup.Store.Provider = ptr.To(druidv1alpha1.StorageProvider("local"))
		},
		"prefix of the same": func(e *druidv1alpha1.Etcd) { e.Spec.Backup.Store.Prefix = "other" },
	} {
		updated := with(old.DeepCopy(), mutate)
		if errs := validation.ValidateEtcdUpdate(updated, old); len(errs) != 0 {
			t.Errorf("%s: %v; want the kept container ratcheted", name, errs)
		}
	}
}

// The prefix is judged again when the provider changes, as the container is: a "../" prefix kept from an
// object store would lead out of the node directory druid mounts for a Local store.
func TestProviderChangeToLocalJudgesTheKeptPrefix(t *testing.T) {
	old := with(validEtcd(), func(e *druidv1alpha1.Etcd) { e.Spec.Backup.Store.Prefix = "../other/etcd-main" })
	moved := with(old.DeepCopy(), func(e *druidv1alpha1.Etcd) {
		e.Spec.Backup.Store.Provider = ptr.To(druidv1alpha1.StorageProviderLocal)
		e.Spec.Backup.Store.Container = ptr.To("default.bkp")
	})
	expectSingleError(t, validation.ValidateEtcdUpdate(moved, old), "spec.backup.store.prefix", field.ErrorTypeInvalid, `".." path segment`)

	task := validCopyTask()
	task.Spec.TargetStore.Prefix = "../x"
	movedTask := task.DeepCopy()
	movedTask.Spec.TargetStore.Provider = ptr.To(druidv1alpha1.StorageProvider("local"))
	movedTask.Spec.TargetStore.Container = nil
	expectSingleError(t, validation.Ratchet(validation.ValidateEtcdCopyBackupsTask(movedTask), movedTask, task),
		"spec.targetStore.prefix", field.ErrorTypeInvalid, `".." path segment`)
}
