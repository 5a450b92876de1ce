package validation

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateTolerations checks spec.schedulingConstraints.tolerations, which druid copies into the pod
// template, by the rules the apiserver applies to a pod's tolerations: refused there, they would fail every
// write of the StatefulSet instead of the Etcd's.
func validateTolerations(tolerations []corev1.Toleration, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range tolerations {
		at := fld.Index(i)
		if t.Key != "" {
			errs = append(errs, metav1validation.ValidateLabelName(t.Key, at.Child("key"))...)
		}
		switch t.Operator {
		case corev1.TolerationOpEqual, "":
			if t.Key == "" {
				errs = append(errs, field.Invalid(at.Child("operator"), t.Operator, "must be Exists when key is empty (to tolerate every taint)"))
			}
			for _, msg := range utilvalidation.IsValidLabelValue(t.Value) {
				errs = append(errs, field.Invalid(at.Child("value"), t.Value, msg))
			}
		case corev1.TolerationOpExists:
			if t.Value != "" {
				errs = append(errs, field.Invalid(at.Child("value"), t.Value, "must be empty when operator is Exists"))
			}
		default:
			errs = append(errs, field.NotSupported(at.Child("operator"), t.Operator, []corev1.TolerationOperator{corev1.TolerationOpEqual, corev1.TolerationOpExists}))
		}
		switch t.Effect {
		case "", corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			errs = append(errs, field.NotSupported(at.Child("effect"), t.Effect,
				[]corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute}))
		}
		if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
			errs = append(errs, field.Invalid(at.Child("tolerationSeconds"), *t.TolerationSeconds,
				fmt.Sprintf("must be unset unless effect is %s", corev1.TaintEffectNoExecute)))
		}
	}
	return errs
}
