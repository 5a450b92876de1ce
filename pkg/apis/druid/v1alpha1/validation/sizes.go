package validation

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// MaxReplicas is the largest member count admitted. Upstream etcd-druid's schema has no upper bound, but
// every member is a pod, a volume and a Lease in the seed, and the member list is written into every
// member's configuration: a million members exhaust the seed before the first one starts. No etcd cluster
// runs with more than a handful of members (etcd recommends at most 7; every write waits for a majority),
// so the bound only has to admit what is already written: Gardener's own tests keep an existing 245.
// Counts above RecommendedMaxReplicas are admitted with a warning.
const (
	MaxReplicas            = 255
	RecommendedMaxReplicas = 7
)

// MaxSnapshotCount bounds spec.etcd.snapshotCount: etcd keeps the raft entries since the last snapshot in
// memory, so a count far above etcd's own defaults (100000 up to 3.5, 10000 since 3.6) lets a busy member
// grow until it is OOM-killed.
const MaxSnapshotCount = 1_000_000

// The bounds of spec.backup.deltaSnapshotMemoryLimit. The sidecar cuts a delta snapshot as soon as the
// events it buffers reach the limit: at 1 byte it uploads one object per write, flooding the store and
// the garbage collection. It holds that much in memory before it uploads: above 1Gi the sidecar grows
// beyond any sensible container limit. Default (and Gardener's value) is 100Mi.
var (
	MinDeltaSnapshotMemoryLimit = resource.MustParse("1Mi")
	MaxDeltaSnapshotMemoryLimit = resource.MustParse("1Gi")
)

// MinQuota bounds spec.etcd.quota from below: etcd raises its NOSPACE alarm once the database reaches the
// quota and refuses every write until an operator disarms it, even after the quota is raised. An empty
// database takes a few MiB; below 64Mi a cluster turns read-only soon after it starts.
var MinQuota = resource.MustParse("64Mi")

// RecommendedMaxQuota is etcd's suggested maximum database size; larger quotas are admitted with a warning.
var RecommendedMaxQuota = resource.MustParse("8Gi")

// validateSizes checks the Etcd's counts and sizes against their bounds.
func validateSizes(spec *druidv1alpha1.EtcdSpec, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	if spec.Replicas > MaxReplicas {
		errs = append(errs, field.Invalid(fld.Child("replicas"), spec.Replicas, fmt.Sprintf("must be at most %d (etcd recommends at most %d members)", MaxReplicas, RecommendedMaxReplicas)))
	}
	etcd, backup := fld.Child("etcd"), fld.Child("backup")
	if c := spec.Etcd.SnapshotCount; c != nil && *c > MaxSnapshotCount {
		errs = append(errs, field.Invalid(etcd.Child("snapshotCount"), *c, fmt.Sprintf("must be at most %d: etcd keeps the entries between two raft snapshots in memory", MaxSnapshotCount)))
	}
	if q := spec.Etcd.Quota; q != nil && q.Sign() > 0 && q.Cmp(MinQuota) < 0 {
		errs = append(errs, field.Invalid(etcd.Child("quota"), q.String(), fmt.Sprintf("must be at least %s: at the quota etcd refuses every write", MinQuota.String())))
	}
	errs = append(errs, validateQuotaFitsVolume(spec, fld)...)
	if l := spec.Backup.DeltaSnapshotMemoryLimit; l != nil && l.Sign() > 0 && (l.Cmp(MinDeltaSnapshotMemoryLimit) < 0 || l.Cmp(MaxDeltaSnapshotMemoryLimit) > 0) {
		errs = append(errs, field.Invalid(backup.Child("deltaSnapshotMemoryLimit"), l.String(), fmt.Sprintf("must be from %s to %s: the sidecar cuts a delta snapshot each time its buffered events reach it",
			MinDeltaSnapshotMemoryLimit.String(), MaxDeltaSnapshotMemoryLimit.String())))
	}
	return errs
}

// validateQuotaFitsVolume refuses an explicit quota larger than the data volume (16Gi when unset): the
// volume fills up before etcd's quota alarm, and a member that cannot write its WAL stops. An unset
// quota takes etcd's default (8Gi), which is nobody's choice: a small volume without a quota (as upstream
// etcd-druid's samples write it) is admitted with a warning (defaultQuotaWarning). The error is reported
// on each field that is set; on update it stands only when the change widens the gap (quotaExcessGrew).
func validateQuotaFitsVolume(spec *druidv1alpha1.EtcdSpec, fld *field.Path) field.ErrorList {
	excess := quotaExcess(spec)
	if excess.Sign() <= 0 {
		return nil
	}
	quota, capacity := *spec.Etcd.Quota, quantityOr(spec.StorageCapacity, druidv1alpha1.DefaultStorageCapacity)
	msg := fmt.Sprintf("spec.etcd.quota (%s) must not exceed spec.storageCapacity (%s): the volume would fill up before etcd's quota alarm", quota.String(), capacity.String())
	errs := field.ErrorList{field.Invalid(fld.Child("etcd", "quota"), quota.String(), msg)}
	if spec.StorageCapacity != nil {
		errs = append(errs, field.Invalid(fld.Child("storageCapacity"), capacity.String(), msg))
	}
	return errs.WithOrigin(originQuotaFitsVolume)
}

// quotaExcess is by how much an explicit quota exceeds the volume (zero when it fits, when the quota is
// unset, or when either is not positive: those are refused by their own rules).
func quotaExcess(spec *druidv1alpha1.EtcdSpec) resource.Quantity {
	if spec.Etcd.Quota == nil {
		return resource.Quantity{}
	}
	quota, capacity := *spec.Etcd.Quota, quantityOr(spec.StorageCapacity, druidv1alpha1.DefaultStorageCapacity)
	if quota.Sign() <= 0 || capacity.Sign() <= 0 || quota.Cmp(capacity) <= 0 {
		return resource.Quantity{}
	}
	quota.Sub(capacity)
	return quota
}

// quotaExcessGrew judges the quota-versus-volume errors of an Etcd update (see Ratchet's judges): an
// Etcd stored with a quota above its volume may move towards compliance (a larger volume, a lower quota)
// in steps; only a change that widens the gap is refused.
func quotaExcessGrew(_ *field.Error, newObj, oldObj any) (worse, applies bool) {
	newEtcd, ok1 := newObj.(*druidv1alpha1.Etcd)
	oldEtcd, ok2 := oldObj.(*druidv1alpha1.Etcd)
	if !ok1 || !ok2 {
		return false, false
	}
	newExcess, oldExcess := quotaExcess(&newEtcd.Spec), quotaExcess(&oldEtcd.Spec)
	return newExcess.Cmp(oldExcess) > 0, true
}

// defaultQuotaWarning names an unset quota whose default exceeds the volume (see validateQuotaFitsVolume).
func defaultQuotaWarning(spec *druidv1alpha1.EtcdSpec, fld *field.Path) []string {
	if spec.Etcd.Quota != nil {
		return nil
	}
	quota, capacity := resource.MustParse(druidv1alpha1.DefaultQuota), quantityOr(spec.StorageCapacity, druidv1alpha1.DefaultStorageCapacity)
	if capacity.Sign() <= 0 || quota.Cmp(capacity) <= 0 {
		return nil
	}
	return []string{fmt.Sprintf("%s: unset, etcd's default quota %s exceeds spec.storageCapacity (%s): the volume may fill up before etcd's quota alarm; set a quota below the volume",
		fld.Child("etcd", "quota"), quota.String(), capacity.String())}
}

func quantityOr(q *resource.Quantity, fallback string) resource.Quantity {
	if q != nil {
		return *q
	}
	return resource.MustParse(fallback)
}
