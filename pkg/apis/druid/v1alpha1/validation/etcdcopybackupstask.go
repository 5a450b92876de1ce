package validation

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// ValidateEtcdCopyBackupsTask checks a copy task: both stores valid and distinct. The distinctness error
// names spec, the closest field both stores are under: an update ratchets by the field an error names
// (Ratchet), and a change of either store must be judged.
func ValidateEtcdCopyBackupsTask(task *druidv1alpha1.EtcdCopyBackupsTask) field.ErrorList {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	errs = append(errs, ValidateStore(&task.Spec.SourceStore, spec.Child("sourceStore"))...)
	errs = append(errs, ValidateStore(&task.Spec.TargetStore, spec.Child("targetStore"))...)
	errs = append(errs, validateJobPodLabels(task.Spec.PodLabels, spec.Child("podLabels"))...)
	src, dst := task.Spec.SourceStore, task.Spec.TargetStore
	if druidv1alpha1.SameLocation(src, dst) {
		errs = append(errs, field.Invalid(spec, dst.Prefix, "spec.targetStore must differ from spec.sourceStore (provider, container or prefix)"))
	}
	if w := task.Spec.WaitForFinalSnapshot; w != nil && w.Timeout != nil && w.Timeout.Duration <= 0 {
		errs = append(errs, field.Invalid(spec.Child("waitForFinalSnapshot", "timeout"), w.Timeout.Duration.String(), "must be a positive duration such as 10m"))
	}
	return errs
}
