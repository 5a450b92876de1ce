package validation_test

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1/validation"
)

func validCopyTask() *druidv1alpha1.EtcdCopyBackupsTask {
	store := func(prefix string) druidv1alpha1.StoreSpec {
		return druidv1alpha1.StoreSpec{Container: ptr.To("backups"), Prefix: prefix, Provider: ptr.To(druidv1alpha1.StorageProviderS3)}
	}
	return &druidv1alpha1.EtcdCopyBackupsTask{
		ObjectMeta: metav1.ObjectMeta{Name: "copy", Namespace: "shoot--dev--a"},
		Spec: druidv1alpha1.EtcdCopyBackupsTaskSpec{
			SourceStore:          store("source-shoot--dev--a--uid/etcd-main"),
			TargetStore:          store("shoot--dev--a--uid/etcd-main"),
			WaitForFinalSnapshot: &druidv1alpha1.WaitForFinalSnapshotSpec{Enabled: true, Timeout: &metav1.Duration{Duration: 10 * time.Minute}},
		},
	}
}

func TestValidCopyTask(t *testing.T) {
	if errs := validation.ValidateEtcdCopyBackupsTask(validCopyTask()); len(errs) > 0 {
		t.Fatalf("unexpected errors: %v", errs)
	}
}

func TestInvalidCopyTask(t *testing.T) {
	cases := []struct {
		name      string
		mutate    func(*druidv1alpha1.EtcdCopyBackupsTask)
		field     string
		errorType field.ErrorType
		message   string
	}{
		{"same store", func(task *druidv1alpha1.EtcdCopyBackupsTask) {
			task.Spec.TargetStore.Prefix = task.Spec.SourceStore.Prefix
		},
			"spec", field.ErrorTypeInvalid, "must differ"},
		{"source without prefix", func(task *druidv1alpha1.EtcdCopyBackupsTask) { task.Spec.SourceStore.Prefix = "" },
			"spec.sourceStore.prefix", field.ErrorTypeRequired, "snapshots"},
		{"target with an empty container", func(task *druidv1alpha1.EtcdCopyBackupsTask) { task.Spec.TargetStore.Container = ptr.To("") },
			"spec.targetStore.container", field.ErrorTypeInvalid, "name the bucket"},
		{"Local source climbing out of the host directory", func(task *druidv1alpha1.EtcdCopyBackupsTask) {
			task.Spec.SourceStore.Provider = ptr.To(druidv1alpha1.StorageProviderLocal)
			task.Spec.SourceStore.Container = ptr.To("../../var/lib/kubelet")
		},
			"spec.sourceStore.container", field.ErrorTypeInvalid, "one path segment"},
		{"Local target of two segments", func(task *druidv1alpha1.EtcdCopyBackupsTask) {
			task.Spec.TargetStore.Provider = ptr.To(druidv1alpha1.StorageProvider("local"))
			task.Spec.TargetStore.Container = ptr.To("a/b")
		},
			"spec.targetStore.container", field.ErrorTypeInvalid, "one path segment"},
		{"zero wait timeout", func(task *druidv1alpha1.EtcdCopyBackupsTask) { task.Spec.WaitForFinalSnapshot.Timeout.Duration = 0 },
			"spec.waitForFinalSnapshot.timeout", field.ErrorTypeInvalid, "positive"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			task := validCopyTask()
			tc.mutate(task)
			expectSingleError(t, validation.ValidateEtcdCopyBackupsTask(task), tc.field, tc.errorType, tc.message)
		})
	}
}

// An update that moves the source store onto the target must be refused although the target did not
// change: the distinctness rule names spec, so ratcheting by field never drops it.
func TestCopyTaskUpdateOntoItsTargetIsRefused(t *testing.T) {
	old := validCopyTask()
	moved := old.DeepCopy()
	moved.Spec.SourceStore = moved.Spec.TargetStore
	errs := validation.Ratchet(validation.ValidateEtcdCopyBackupsTask(moved), moved, old)
	expectSingleError(t, errs, "spec", field.ErrorTypeInvalid, "must differ")
}
