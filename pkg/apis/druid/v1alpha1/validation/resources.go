package validation

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// MinMemoryLimit is the smallest memory limit admitted for etcd, the sidecar and the compaction Job: etcd
// alone takes tens of MiB with an empty database, and the sidecar and the compaction Job hold snapshot
// chunks in memory; below it a member is OOM-killed in a loop as soon as it takes writes or restores.
var MinMemoryLimit = resource.MustParse("64Mi")

// validateContainerResources checks the resource requirements druid copies into the etcd and
// backup-restore containers and the compaction Job. The apiserver checks the same (quantities not
// negative, requests not above limits, resource names) only when druid writes the StatefulSet or Job,
// which then fails on every reconcile. Resource claims are refused: druid's pods declare none, so a
// container that names one makes the pod invalid.
func validateContainerResources(spec *druidv1alpha1.EtcdSpec, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateResources(spec.Etcd.Resources, fld.Child("etcd", "resources"))...)
	errs = append(errs, validateResources(spec.Backup.Resources, fld.Child("backup", "resources"))...)
	if c := spec.Backup.SnapshotCompaction; c != nil {
		errs = append(errs, validateResources(c.Resources, fld.Child("backup", "snapshotCompaction", "resources"))...)
	}
	return errs
}

func validateResources(r *corev1.ResourceRequirements, fld *field.Path) field.ErrorList {
	if r == nil {
		return nil
	}
	var errs field.ErrorList
	checkList := func(list corev1.ResourceList, at *field.Path) {
		for name, q := range list {
			for _, msg := range utilvalidation.IsQualifiedName(string(name)) {
				errs = append(errs, field.Invalid(at.Key(string(name)), string(name), "must be a resource name: "+msg))
			}
			if q.Sign() < 0 {
				errs = append(errs, field.Invalid(at.Key(string(name)), q.String(), "must not be negative"))
			}
		}
	}
	checkList(r.Requests, fld.Child("requests"))
	checkList(r.Limits, fld.Child("limits"))
	for name, request := range r.Requests {
		if limit, ok := r.Limits[name]; ok && request.Cmp(limit) > 0 {
			errs = append(errs, field.Invalid(fld.Child("requests").Key(string(name)), request.String(), fmt.Sprintf("must not exceed the limit %s", limit.String())))
		}
	}
	if memory, ok := r.Limits[corev1.ResourceMemory]; ok && memory.Sign() >= 0 && memory.Cmp(MinMemoryLimit) < 0 {
		errs = append(errs, field.Invalid(fld.Child("limits").Key(string(corev1.ResourceMemory)), memory.String(),
			fmt.Sprintf("must be at least %s: below it the container is OOM-killed in a loop", MinMemoryLimit.String())))
	}
	if len(r.Claims) > 0 {
		errs = append(errs, field.Forbidden(fld.Child("claims"), "druid's pods declare no resource claims; leave this empty"))
	}
	return errs
}
