package validation_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1/validation"
)

func validOpsTask() *druidv1alpha1.EtcdOpsTask {
	return &druidv1alpha1.EtcdOpsTask{
		ObjectMeta: metav1.ObjectMeta{Name: "snapshot", Namespace: "shoot--dev--a"},
		Spec: druidv1alpha1.EtcdOpsTaskSpec{
			EtcdName:                ptr.To("etcd-main"),
			TTLSecondsAfterFinished: ptr.To[int32](3600),
			Config: druidv1alpha1.EtcdOpsTaskConfig{OnDemandSnapshot: &druidv1alpha1.OnDemandSnapshotConfig{
				Type: druidv1alpha1.OnDemandSnapshotTypeFull, IsFinal: ptr.To(true),
				TimeoutSecondsFull: ptr.To[int32](480), TimeoutSecondsDelta: ptr.To[int32](60),
			}},
		},
	}
}

func TestValidOpsTasks(t *testing.T) {
	delta := validOpsTask()
	delta.Spec.Config.OnDemandSnapshot.Type = druidv1alpha1.OnDemandSnapshotTypeDelta
	delta.Spec.Config.OnDemandSnapshot.IsFinal = ptr.To(false)
	minimal := validOpsTask() // what a user writes before the CRD defaults apply
	minimal.Spec.TTLSecondsAfterFinished = nil
	minimal.Spec.Config.OnDemandSnapshot = &druidv1alpha1.OnDemandSnapshotConfig{Type: druidv1alpha1.OnDemandSnapshotTypeFull}
	for name, task := range map[string]*druidv1alpha1.EtcdOpsTask{"full, final": validOpsTask(), "delta": delta, "minimal": minimal} {
		if errs := validation.ValidateEtcdOpsTask(task); len(errs) > 0 {
			t.Errorf("%s: unexpected errors: %v", name, errs)
		}
	}
}

func TestInvalidOpsTask(t *testing.T) {
	cases := []struct {
		name      string
		mutate    func(*druidv1alpha1.EtcdOpsTask)
		field     string
		errorType field.ErrorType
		message   string
	}{
		{"no etcd", func(task *druidv1alpha1.EtcdOpsTask) { task.Spec.EtcdName = nil },
			"spec.etcdName", field.ErrorTypeRequired, "must name the Etcd"},
		{"empty etcd name", func(task *druidv1alpha1.EtcdOpsTask) { task.Spec.EtcdName = ptr.To("") },
			"spec.etcdName", field.ErrorTypeRequired, "must name the Etcd"},
		{"etcd name no object name", func(task *druidv1alpha1.EtcdOpsTask) { task.Spec.EtcdName = ptr.To("Etcd_Main") },
			"spec.etcdName", field.ErrorTypeInvalid, "must be the name of an Etcd"},
		{"zero ttl", func(task *druidv1alpha1.EtcdOpsTask) { task.Spec.TTLSecondsAfterFinished = ptr.To[int32](0) },
			"spec.ttlSecondsAfterFinished", field.ErrorTypeInvalid, "at least 1"},
		{"no operation", func(task *druidv1alpha1.EtcdOpsTask) { task.Spec.Config = druidv1alpha1.EtcdOpsTaskConfig{} },
			"spec.config", field.ErrorTypeRequired, "exactly one operation"},
		{"unknown snapshot type", func(task *druidv1alpha1.EtcdOpsTask) { task.Spec.Config.OnDemandSnapshot.Type = "incremental" },
			"spec.config.onDemandSnapshot.type", field.ErrorTypeNotSupported, `"full", "delta"`},
		{"final delta", func(task *druidv1alpha1.EtcdOpsTask) {
			task.Spec.Config.OnDemandSnapshot.Type = druidv1alpha1.OnDemandSnapshotTypeDelta
		},
			"spec.config.onDemandSnapshot.isFinal", field.ErrorTypeInvalid, "when type is 'delta'"},
		{"full timeout below the minimum", func(task *druidv1alpha1.EtcdOpsTask) {
			task.Spec.Config.OnDemandSnapshot.TimeoutSecondsFull = ptr.To[int32](119)
		},
			"spec.config.onDemandSnapshot.timeoutSecondsFull", field.ErrorTypeInvalid, "at least 120"},
		{"delta timeout below the minimum", func(task *druidv1alpha1.EtcdOpsTask) {
			task.Spec.Config.OnDemandSnapshot.TimeoutSecondsDelta = ptr.To[int32](9)
		},
			"spec.config.onDemandSnapshot.timeoutSecondsDelta", field.ErrorTypeInvalid, "at least 10"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			task := validOpsTask()
			tc.mutate(task)
			expectSingleError(t, validation.ValidateEtcdOpsTask(task), tc.field, tc.errorType, tc.message)
		})
	}
}

func TestOpsTaskSpecIsImmutable(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*druidv1alpha1.EtcdOpsTask)
		field  string
	}{
		{"config", func(task *druidv1alpha1.EtcdOpsTask) {
			task.Spec.Config.OnDemandSnapshot.Type = druidv1alpha1.OnDemandSnapshotTypeDelta
		},
			"spec.config"},
		{"etcd", func(task *druidv1alpha1.EtcdOpsTask) { task.Spec.EtcdName = ptr.To("etcd-events") }, "spec.etcdName"},
		{"ttl", func(task *druidv1alpha1.EtcdOpsTask) { task.Spec.TTLSecondsAfterFinished = ptr.To[int32](60) }, "spec.ttlSecondsAfterFinished"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			old, task := validOpsTask(), validOpsTask()
			tc.mutate(task)
			expectSingleError(t, validation.ValidateEtcdOpsTaskUpdate(task, old), tc.field, field.ErrorTypeForbidden, "immutable")
		})
	}
	t.Run("status and labels may change", func(t *testing.T) {
		old, task := validOpsTask(), validOpsTask()
		task.Labels = map[string]string{"a": "b"}
		task.Status.State = ptr.To(druidv1alpha1.TaskStateSucceeded)
		if errs := validation.ValidateEtcdOpsTaskUpdate(task, old); len(errs) > 0 {
			t.Fatalf("unexpected errors: %v", errs)
		}
	})
}

// A final full snapshot says that the cluster was shut down on purpose (a migration's copy waits for it),
// so a task asks for one only of an Etcd whose operator declared its clients stopped; any other task, and
// Gardener's own final snapshot (a direct sidecar call, no task), are not judged by this.
func TestFinalSnapshotTaskNeedsTheEtcdsDeclaration(t *testing.T) {
	running := &druidv1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: "shoot--dev--a"}}
	errs := validation.ValidateEtcdOpsTaskForEtcd(validOpsTask(), running)
	if len(errs) != 1 || errs[0].Type != field.ErrorTypeForbidden || errs[0].Field != "spec.config.onDemandSnapshot.isFinal" {
		t.Fatalf("final snapshot of a running Etcd: got %v, want Forbidden on spec.config.onDemandSnapshot.isFinal", errs)
	}
	declared := running.DeepCopy()
	declared.Annotations = map[string]string{validation.FinalSnapshotAllowedAnnotation: "true"}
	if errs := validation.ValidateEtcdOpsTaskForEtcd(validOpsTask(), declared); len(errs) > 0 {
		t.Errorf("final snapshot of an Etcd declared stopped: unexpected errors %v", errs)
	}
	notFinal := validOpsTask()
	notFinal.Spec.Config.OnDemandSnapshot.IsFinal = nil
	if errs := validation.ValidateEtcdOpsTaskForEtcd(notFinal, running); len(errs) > 0 {
		t.Errorf("full snapshot of a running Etcd: unexpected errors %v", errs)
	}
}
