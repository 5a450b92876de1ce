package validation

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// EtcdWarnings are the admission warnings for settings that are admitted because they harm nothing by
// themselves (and upstream etcd-druid and Gardener admit them) but are probably not meant. The warnings
// about replicas parity and the store's container and provider are EvenReplicasWarning and StoreWarnings.
func EtcdWarnings(etcd *druidv1alpha1.Etcd) []string {
	spec := &etcd.Spec
	fld := field.NewPath("spec")
	backup := fld.Child("backup")
	var warnings []string
	if spec.Replicas > RecommendedMaxReplicas && spec.Replicas <= MaxReplicas {
		warnings = append(warnings, fmt.Sprintf("%s: %d members; etcd recommends at most %d: every write waits for a majority, so more members make writes slower and tolerate no more than the network allows",
			fld.Child("replicas"), spec.Replicas, RecommendedMaxReplicas))
	}
	if q := spec.Etcd.Quota; q != nil && q.Cmp(RecommendedMaxQuota) > 0 {
		warnings = append(warnings, fmt.Sprintf("%s: %s is above etcd's suggested maximum database size %s; defragmentation and snapshots of a larger database take longer",
			fld.Child("etcd", "quota"), q.String(), RecommendedMaxQuota.String()))
	}
	warnings = append(warnings, defaultQuotaWarning(spec, fld)...)
	if spec.Backup.Store != nil {
		if d := spec.Backup.DeltaSnapshotPeriod; d != nil && d.Duration == 0 {
			warnings = append(warnings, fmt.Sprintf("%s: 0 turns delta snapshots off; a restore loses every write since the last full snapshot", backup.Child("deltaSnapshotPeriod")))
		}
		warnings = append(warnings, prefixWarnings(spec.Backup.Store.Prefix, backup.Child("store", "prefix"))...)
	}
	if ptr.Deref(spec.Backup.EnableProfiling, false) {
		warnings = append(warnings, fmt.Sprintf("%s: the sidecar serves Go's profiler (pprof) on its port %d to anyone who can reach the pod",
			backup.Child("enableProfiling"), ptr.Deref(spec.Backup.Port, druidv1alpha1.DefaultBackupPort)))
	}
	warnings = append(warnings, privilegedPortWarnings(spec, fld)...)
	if r := spec.Backup.Resources; r != nil {
		buffer := quantityOr(spec.Backup.DeltaSnapshotMemoryLimit, druidv1alpha1.DefaultDeltaSnapshotMemoryLimit)
		if limit, ok := r.Limits[corev1.ResourceMemory]; ok && limit.Cmp(buffer) <= 0 {
			warnings = append(warnings, fmt.Sprintf("%s: %s is not above spec.backup.deltaSnapshotMemoryLimit (%s), which the sidecar may buffer in memory: it may be OOM-killed under write load",
				backup.Child("resources", "limits").Key(string(corev1.ResourceMemory)), limit.String(), buffer.String()))
		}
	}
	if c := spec.Backup.SnapshotCompaction; c != nil && c.EventsThreshold != nil && c.TriggerFullSnapshotThreshold != nil &&
		*c.TriggerFullSnapshotThreshold <= *c.EventsThreshold {
		warnings = append(warnings, fmt.Sprintf("%s: %d is not above eventsThreshold (%d): druid asks for a full snapshot instead of ever starting a compaction Job",
			backup.Child("snapshotCompaction", "triggerFullSnapshotThreshold"), *c.TriggerFullSnapshotThreshold, *c.EventsThreshold))
	}
	return warnings
}

// CopyTaskWarnings are the admission warnings of an EtcdCopyBackupsTask (see EtcdWarnings).
func CopyTaskWarnings(task *druidv1alpha1.EtcdCopyBackupsTask) []string {
	spec := field.NewPath("spec")
	var warnings []string
	warnings = append(warnings, prefixWarnings(task.Spec.SourceStore.Prefix, spec.Child("sourceStore", "prefix"))...)
	warnings = append(warnings, prefixWarnings(task.Spec.TargetStore.Prefix, spec.Child("targetStore", "prefix"))...)
	warnings = append(warnings, StoreWarnings(&task.Spec.SourceStore, spec.Child("sourceStore"))...)
	warnings = append(warnings, StoreWarnings(&task.Spec.TargetStore, spec.Child("targetStore"))...)
	return warnings
}
