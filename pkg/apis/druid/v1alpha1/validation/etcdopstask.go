package validation

import (
	"fmt"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// ValidateEtcdOpsTask checks a task: the Etcd named, exactly one operation in spec.config, and that
// operation one this druid runs (onDemandSnapshot) with values in the upstream schema's ranges. The CRD
// schema says most of this too; the messages here name what to write instead.
func ValidateEtcdOpsTask(task *druidv1alpha1.EtcdOpsTask) field.ErrorList {
	spec := field.NewPath("spec")
	var errs field.ErrorList

	etcdName := spec.Child("etcdName")
	switch {
	case task.Spec.EtcdName == nil || *task.Spec.EtcdName == "":
		errs = append(errs, field.Required(etcdName, "must name the Etcd (in the task's namespace) the task runs on"))
	default:
		for _, msg := range utilvalidation.IsDNS1123Subdomain(*task.Spec.EtcdName) {
			errs = append(errs, field.Invalid(etcdName, *task.Spec.EtcdName, "must be the name of an Etcd: "+msg))
		}
	}

	if ttl := task.Spec.TTLSecondsAfterFinished; ttl != nil && *ttl < 1 {
		errs = append(errs, field.Invalid(spec.Child("ttlSecondsAfterFinished"), *ttl, "must be at least 1 (seconds a finished task is kept)"))
	}

	config := spec.Child("config")
	set := 0
	if task.Spec.Config.OnDemandSnapshot != nil {
		set++
	}
	switch {
	case set == 0:
		errs = append(errs, field.Required(config, "must set exactly one operation: onDemandSnapshot"))
	case set > 1:
		errs = append(errs, field.Invalid(config, "", "must set exactly one operation, not several"))
	}
	if s := task.Spec.Config.OnDemandSnapshot; s != nil {
		errs = append(errs, validateOnDemandSnapshot(s, config.Child("onDemandSnapshot"))...)
	}
	return errs
}

func validateOnDemandSnapshot(s *druidv1alpha1.OnDemandSnapshotConfig, fld *field.Path) field.ErrorList {
	errs := validateEnum(s.Type, fld.Child("type"), druidv1alpha1.OnDemandSnapshotTypeFull, druidv1alpha1.OnDemandSnapshotTypeDelta)
	if s.Type == druidv1alpha1.OnDemandSnapshotTypeDelta && ptr.Deref(s.IsFinal, false) {
		errs = append(errs, field.Invalid(fld.Child("isFinal"), true, "isFinal must be false (or omitted) when type is 'delta': only a full snapshot can be final"))
	}
	minimum := func(v *int32, least int32, name string) {
		if v != nil && *v < least {
			errs = append(errs, field.Invalid(fld.Child(name), *v, fmt.Sprintf("must be at least %d (seconds)", least)))
		}
	}
	minimum(s.TimeoutSecondsDelta, druidv1alpha1.MinOnDemandSnapshotTimeoutDelta, "timeoutSecondsDelta")
	minimum(s.TimeoutSecondsFull, druidv1alpha1.MinOnDemandSnapshotTimeoutFull, "timeoutSecondsFull")
	return errs
}

// ValidateEtcdOpsTaskUpdate checks an update: the spec is immutable (as the upstream CRD's rules say for
// config, etcdName and ttlSecondsAfterFinished), so only metadata and status may change.
func ValidateEtcdOpsTaskUpdate(task, old *druidv1alpha1.EtcdOpsTask) field.ErrorList {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	if !apiequality.Semantic.DeepEqual(task.Spec.Config, old.Spec.Config) {
		errs = append(errs, field.Forbidden(spec.Child("config"), "config is immutable: create a new task instead"))
	}
	errs = append(errs, validateImmutable(task.Spec.EtcdName, old.Spec.EtcdName, spec.Child("etcdName"))...)
	errs = append(errs, validateImmutable(task.Spec.TTLSecondsAfterFinished, old.Spec.TTLSecondsAfterFinished, spec.Child("ttlSecondsAfterFinished"))...)
	return errs
}

// FinalSnapshotAllowedAnnotation on an Etcd ("true") declares that its clients are stopped for a shutdown
// or a migration, so that an EtcdOpsTask may take its final full snapshot. Without it a final snapshot
// task is refused: a final snapshot tells a migration's copy that the source holds nothing more
// (`etcdbrctl copy` waits for it), which a running cluster contradicts with its next write. Gardener's own
// final snapshot during a migration calls the sidecar directly and needs neither task nor annotation.
// The declaration is used up: druid removes the annotation once a final snapshot task it admitted has
// succeeded, so a cluster woken up later does not admit final snapshots on the strength of an old one.
const FinalSnapshotAllowedAnnotation = "druid.gardener.cloud/final-snapshot-allowed"

// ValidateEtcdOpsTaskForEtcd checks what a task may ask of the Etcd it names: a final full snapshot only
// of an Etcd that carries FinalSnapshotAllowedAnnotation "true".
func ValidateEtcdOpsTaskForEtcd(task *druidv1alpha1.EtcdOpsTask, etcd *druidv1alpha1.Etcd) field.ErrorList {
	s := task.Spec.Config.OnDemandSnapshot
	if s == nil || !ptr.Deref(s.IsFinal, false) || etcd.Annotations[FinalSnapshotAllowedAnnotation] == "true" {
		return nil
	}
	return field.ErrorList{field.Forbidden(field.NewPath("spec", "config", "onDemandSnapshot", "isFinal"),
		fmt.Sprintf("a final full snapshot marks Etcd %s as shut down on purpose (a migration's copy waits for it), but nothing says its clients are stopped: "+
			"annotate the Etcd %s=true once they are, or omit isFinal for a full snapshot of the running cluster", etcd.Name, FinalSnapshotAllowedAnnotation))}
}
