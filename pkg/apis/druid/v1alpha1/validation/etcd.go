package validation

import (
	"fmt"
	"regexp"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// longestNameSuffix is the longest suffix druid appends to an Etcd name for a DNS-label object name
// (`-client`); the Etcd name must leave room for it.
const longestNameSuffix = "-client"

// ValidateEtcd checks a new or updated Etcd on its own.
func ValidateEtcd(etcd *druidv1alpha1.Etcd) field.ErrorList {
	return append(validateEtcdObject(etcd), validateRestoreSource(etcd)...)
}

// validateEtcdObject are the checks of ValidateEtcd that an update ratchets.
func validateEtcdObject(etcd *druidv1alpha1.Etcd) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateEtcdName(etcd.Name, field.NewPath("metadata", "name"))...)
	errs = append(errs, validateEtcdSpec(&etcd.Spec, field.NewPath("spec"))...)
	errs = append(errs, validateMemberLabels(etcd, field.NewPath("spec", "labels"))...)
	errs = append(errs, validateAdditionalPeerURLs(etcd, field.NewPath("spec", "etcd", "additionalAdvertisePeerURLs"))...)
	errs = append(errs, validateBootstrapWithExistingCluster(etcd, field.NewPath("spec", "etcd", "bootstrapWithExistingCluster"))...)
	return errs
}

// ValidateEtcdUpdate checks an update: the fields that changed as on create (a field that kept its value is
// never a reason to refuse an update: Ratchet), and that immutable fields kept their value.
func ValidateEtcdUpdate(newEtcd, oldEtcd *druidv1alpha1.Etcd) field.ErrorList {
	errs := Ratchet(validateEtcdObject(newEtcd), newEtcd, oldEtcd)
	errs = append(errs, validateRestoreSource(newEtcd)...)
	errs = append(errs, validateRestoreSourceUpdate(newEtcd, oldEtcd)...)
	spec := field.NewPath("spec")
	errs = append(errs, validateImmutable(newEtcd.Spec.StorageClass, oldEtcd.Spec.StorageClass, spec.Child("storageClass"))...)
	errs = append(errs, validateImmutable(newEtcd.Spec.VolumeClaimTemplate, oldEtcd.Spec.VolumeClaimTemplate, spec.Child("volumeClaimTemplate"))...)
	errs = append(errs, validateImmutable(newEtcd.Spec.MemberNamePrefix, oldEtcd.Spec.MemberNamePrefix, spec.Child("memberNamePrefix"))...)
	errs = append(errs, validateNoShrink(newEtcd.Spec.StorageCapacity, oldEtcd.Spec.StorageCapacity, spec.Child("storageCapacity"))...)
	errs = append(errs, validateBootstrapWithExistingClusterUpdate(newEtcd, oldEtcd, spec.Child("etcd", "bootstrapWithExistingCluster"))...)
	return errs
}

// validateNoShrink refuses a smaller spec.storageCapacity: volumes never shrink (Kubernetes refuses a
// smaller request on a PVC), so a smaller value would only ever describe volumes that do not exist. An
// unset capacity counts as the default (16Gi).
func validateNoShrink(newValue, oldValue *resource.Quantity, fld *field.Path) field.ErrorList {
	newCapacity := quantityOr(newValue, druidv1alpha1.DefaultStorageCapacity)
	oldCapacity := quantityOr(oldValue, druidv1alpha1.DefaultStorageCapacity)
	if newCapacity.Cmp(oldCapacity) >= 0 {
		return nil
	}
	return field.ErrorList{field.Forbidden(fld, fmt.Sprintf("may not decrease (%s to %s): the members' volumes cannot shrink", oldCapacity.String(), newCapacity.String()))}
}

func validateEtcdName(name string, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range utilvalidation.IsDNS1035Label(name + longestNameSuffix) {
		errs = append(errs, field.Invalid(fld, name, fmt.Sprintf("with the suffix %q (client Service) the name must be a DNS-1035 label: %s", longestNameSuffix, msg)))
	}
	return errs
}

func validateEtcdSpec(spec *druidv1alpha1.EtcdSpec, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateReplicas(spec.Replicas, fld.Child("replicas"))...)
	errs = append(errs, metav1validation.ValidateLabels(spec.Labels, fld.Child("labels"))...)
	if spec.MemberNamePrefix != nil && *spec.MemberNamePrefix != "" { // "" means none, as druid renders it
		for _, msg := range utilvalidation.IsDNS1123Label(*spec.MemberNamePrefix) {
			errs = append(errs, field.Invalid(fld.Child("memberNamePrefix"), *spec.MemberNamePrefix, msg))
		}
	}
	errs = append(errs, validatePositiveQuantity(spec.StorageCapacity, fld.Child("storageCapacity"))...)
	errs = append(errs, validateEtcdConfig(&spec.Etcd, fld.Child("etcd"))...)
	errs = append(errs, validateBackupSpec(&spec.Backup, fld.Child("backup"))...)
	if spec.Common.AutoCompactionMode != nil {
		errs = append(errs, validateEnum(*spec.Common.AutoCompactionMode, fld.Child("sharedConfig", "autoCompactionMode"), druidv1alpha1.Periodic, druidv1alpha1.Revision)...)
	}
	errs = append(errs, validateSizes(spec, fld)...)
	errs = append(errs, validateDistinctPorts(spec, fld)...)
	errs = append(errs, validateObjectNames(spec, fld)...)
	errs = append(errs, validateSecretReferences(etcdSecretReferences(spec, fld))...)
	errs = append(errs, validateDurations(spec, fld)...)
	errs = append(errs, validateContainerResources(spec, fld)...)
	errs = append(errs, validateScheduling(&spec.SchedulingConstraints, fld.Child("schedulingConstraints"))...)
	errs = append(errs, validateExternallyManagedMemberAddresses(spec, fld.Child("externallyManagedMemberAddresses"))...)
	errs = append(errs, validateMetadataDruidCopies(spec, fld)...)
	errs = append(errs, validateAutoCompactionRetention(&spec.Common, fld.Child("sharedConfig"))...)
	errs = append(errs, validateScheduleInterval(spec.Etcd.DefragmentationSchedule, MinDefragmentationInterval, fld.Child("etcd", "defragmentationSchedule"))...)
	errs = append(errs, validateScheduleInterval(spec.Backup.FullSnapshotSchedule, MinFullSnapshotInterval, fld.Child("backup", "fullSnapshotSchedule"))...)
	return errs
}

// validateReplicas refuses a negative member count. An even count is accepted, as upstream etcd-druid
// accepts it; odd counts are recommended, and the webhook warns (EvenReplicasWarning).
func validateReplicas(replicas int32, fld *field.Path) field.ErrorList {
	if replicas < 0 {
		return field.ErrorList{field.Invalid(fld, replicas, "must be 0 (hibernated) or a positive number of members")}
	}
	return nil
}

func validateEtcdConfig(c *druidv1alpha1.EtcdConfig, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validatePositiveQuantity(c.Quota, fld.Child("quota"))...)
	if c.SnapshotCount != nil && *c.SnapshotCount < 1 {
		errs = append(errs, field.Invalid(fld.Child("snapshotCount"), *c.SnapshotCount, "must be at least 1"))
	}
	errs = append(errs, validateSchedule(c.DefragmentationSchedule, fld.Child("defragmentationSchedule"))...)
	errs = append(errs, validatePort(c.ServerPort, fld.Child("serverPort"))...)
	errs = append(errs, validatePort(c.ClientPort, fld.Child("clientPort"))...)
	errs = append(errs, validatePort(c.WrapperPort, fld.Child("wrapperPort"))...)
	if c.Metrics != nil {
		errs = append(errs, validateEnum(*c.Metrics, fld.Child("metrics"), druidv1alpha1.Basic, druidv1alpha1.Extensive)...)
	}
	if c.ClientUrlTLS != nil {
		errs = append(errs, validateTLS(c.ClientUrlTLS, fld.Child("clientUrlTls"))...)
	}
	if c.PeerUrlTLS != nil {
		errs = append(errs, validateTLS(&c.PeerUrlTLS.TLSConfig, fld.Child("peerUrlTls"))...)
	}
	if c.BackendBboltFreelistType != nil {
		errs = append(errs, validateEnum(*c.BackendBboltFreelistType, fld.Child("backendBboltFreelistType"), druidv1alpha1.BboltFreelistMap, druidv1alpha1.BboltFreelistArray)...)
	}
	if c.AuthSecretRef != nil && c.AuthSecretRef.Name == "" {
		errs = append(errs, field.Required(fld.Child("authSecretRef", "name"), "the name of the secret with the etcd user credentials"))
	}
	return errs
}

func validateTLS(t *druidv1alpha1.TLSConfig, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	if t.TLSCASecretRef.Name == "" {
		errs = append(errs, field.Required(fld.Child("tlsCASecretRef", "name"), "the name of the secret with the CA bundle"))
	}
	if t.TLSCASecretRef.DataKey != nil && *t.TLSCASecretRef.DataKey == "" {
		errs = append(errs, field.Invalid(fld.Child("tlsCASecretRef", "dataKey"), "", "must name a key of the CA secret, or be omitted for the default ca.crt"))
	}
	if t.ServerTLSSecretRef.Name == "" {
		errs = append(errs, field.Required(fld.Child("serverTLSSecretRef", "name"), "the name of the secret with the server certificate (tls.crt, tls.key)"))
	}
	return errs
}

func validateBackupSpec(b *druidv1alpha1.BackupSpec, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validatePort(b.Port, fld.Child("port"))...)
	if b.TLS != nil {
		errs = append(errs, validateTLS(b.TLS, fld.Child("tls"))...)
	}
	if b.Store != nil {
		errs = append(errs, ValidateStore(b.Store, fld.Child("store"))...)
	}
	errs = append(errs, validateSchedule(b.FullSnapshotSchedule, fld.Child("fullSnapshotSchedule"))...)
	if b.GarbageCollectionPolicy != nil {
		errs = append(errs, validateEnum(*b.GarbageCollectionPolicy, fld.Child("garbageCollectionPolicy"),
			druidv1alpha1.GarbageCollectionPolicyExponential, druidv1alpha1.GarbageCollectionPolicyLimitBased)...)
	}
	if b.MaxBackupsLimitBasedGC != nil && *b.MaxBackupsLimitBasedGC < 1 {
		errs = append(errs, field.Invalid(fld.Child("maxBackupsLimitBasedGC"), *b.MaxBackupsLimitBasedGC, "must be at least 1: the latest full snapshot is always kept"))
	}
	errs = append(errs, validateNonNegativeDuration(b.DeltaSnapshotPeriod, fld.Child("deltaSnapshotPeriod"))...)
	if b.DeltaSnapshotPeriod != nil && b.GarbageCollectionPeriod != nil && b.DeltaSnapshotPeriod.Duration >= b.GarbageCollectionPeriod.Duration {
		errs = append(errs, field.Invalid(fld.Child("deltaSnapshotPeriod"), b.DeltaSnapshotPeriod.Duration.String(),
			fmt.Sprintf("must be shorter than spec.backup.garbageCollectionPeriod (%s), otherwise garbage collection removes deltas before the next full snapshot covers them", b.GarbageCollectionPeriod.Duration)))
	}
	errs = append(errs, validatePositiveQuantity(b.DeltaSnapshotMemoryLimit, fld.Child("deltaSnapshotMemoryLimit"))...)
	errs = append(errs, validateNonNegativeDuration(b.DeltaSnapshotRetentionPeriod, fld.Child("deltaSnapshotRetentionPeriod"))...)
	if b.SnapshotCompression != nil && b.SnapshotCompression.Policy != nil {
		errs = append(errs, validateEnum(*b.SnapshotCompression.Policy, fld.Child("compression", "policy"),
			druidv1alpha1.GzipCompression, druidv1alpha1.LzwCompression, druidv1alpha1.ZlibCompression)...)
	}
	if c := b.SnapshotCompaction; c != nil {
		if c.EventsThreshold != nil && *c.EventsThreshold < 1 {
			errs = append(errs, field.Invalid(fld.Child("snapshotCompaction", "eventsThreshold"), *c.EventsThreshold, "must be at least 1"))
		}
		if c.TriggerFullSnapshotThreshold != nil && *c.TriggerFullSnapshotThreshold < 1 {
			errs = append(errs, field.Invalid(fld.Child("snapshotCompaction", "triggerFullSnapshotThreshold"), *c.TriggerFullSnapshotThreshold, "must be at least 1"))
		}
	}
	return errs
}

// containerPattern is the bucket name rule shared by the supported object stores: 3 to 63 lower-case
// letters, digits, dots, dashes and underscores, starting and ending with a letter or digit. A container
// outside it is accepted (upstream etcd-druid accepts any string, and some stores allow upper-case
// names); StoreWarnings names it.
var containerPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]$`)

// ValidateStore checks a backup store specification.
func ValidateStore(s *druidv1alpha1.StoreSpec, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Prefix == "" {
		errs = append(errs, field.Required(fld.Child("prefix"), "the path of this cluster's snapshots inside the container, e.g. <backupEntryName>/etcd-main"))
	}
	if s.Container != nil && *s.Container == "" {
		errs = append(errs, field.Invalid(fld.Child("container"), "", "must name the bucket, or be omitted to take it from the backup secret"))
	}
	if s.Provider != nil {
		errs = append(errs, validateEnum(*s.Provider, fld.Child("provider"), druidv1alpha1.KnownStorageProviders()...)...)
		errs = append(errs, validateLocalContainer(s, fld.Child("container"))...)
	}
	if s.SecretRef != nil && s.SecretRef.Name == "" {
		errs = append(errs, field.Required(fld.Child("secretRef", "name"), "the name of the backup secret"))
	}
	prefixErrs := validateStorePrefix(s.Prefix, fld.Child("prefix"))
	if len(prefixErrs) == 0 {
		prefixErrs = validateLocalPrefix(s.Provider, s.Prefix, fld.Child("prefix"))
	}
	errs = append(errs, prefixErrs...)
	errs = append(errs, validateEndpointOverride(s.EndpointOverride, fld.Child("endpointOverride"))...)
	errs = append(errs, validateStoreSecretName(s.SecretRef, fld.Child("secretRef"))...)
	return errs
}

// isLocal tells whether provider names the Local store (by its name or an alias).
func isLocal(provider *druidv1alpha1.StorageProvider) bool {
	return provider != nil && druidv1alpha1.ResolveStorageProvider(*provider) == druidv1alpha1.StorageProviderLocal
}

// validateLocalPrefix refuses a prefix (of a store, or of the restore source read from it) under which
// a Local store's sidecar could not find the snapshots again (see LocalPrefixProblem).
func validateLocalPrefix(provider *druidv1alpha1.StorageProvider, prefix string, fld *field.Path) field.ErrorList {
	if !isLocal(provider) {
		return nil
	}
	if problem := druidv1alpha1.LocalPrefixProblem(prefix); problem != "" {
		return field.ErrorList{field.Invalid(fld, abbreviated(prefix), problem)}
	}
	return nil
}

// validateLocalContainer refuses a Local store's container that is not one path segment: druid mounts
// it below the node directory it allows, so anything else would mount another node directory read-write.
func validateLocalContainer(s *druidv1alpha1.StoreSpec, fld *field.Path) field.ErrorList {
	if !isLocal(s.Provider) {
		return nil
	}
	if s.Container == nil || *s.Container == "" {
		return nil // unset takes the default; empty is refused above
	}
	if problem := druidv1alpha1.LocalContainerProblem(*s.Container); problem != "" {
		return field.ErrorList{field.Invalid(fld, *s.Container, problem)}
	}
	return nil
}

func validateImmutable[T comparable](newValue, oldValue *T, fld *field.Path) field.ErrorList {
	if apiequality.Semantic.DeepEqual(newValue, oldValue) {
		return nil
	}
	return field.ErrorList{field.Forbidden(fld, "is immutable: it cannot be set, changed or removed after creation")}
}

// EvenReplicasWarning is the admission warning for an even member count, or "" for an odd one or 0.
func EvenReplicasWarning(replicas int32) string {
	if replicas <= 0 || replicas%2 != 0 {
		return ""
	}
	return fmt.Sprintf("spec.replicas: %d members tolerate the failure of %d, no more than %d members do; an odd number is recommended",
		replicas, (replicas-1)/2, replicas-1)
}

// StoreWarnings are the admission warnings for a store the webhook accepts but that may not be meant.
func StoreWarnings(s *druidv1alpha1.StoreSpec, fld *field.Path) []string {
	if s == nil {
		return nil
	}
	var warnings []string
	if s.Provider != nil && druidv1alpha1.LowerCaseStorageProvider(*s.Provider) {
		canonical, _ := druidv1alpha1.CanonicalStorageProvider(*s.Provider)
		warnings = append(warnings, fmt.Sprintf("%s: %q is taken as %q here; upstream etcd-druid does not reconcile the lower-case spelling: write %q",
			fld.Child("provider"), *s.Provider, canonical, canonical))
	}
	if s.Container != nil && *s.Container != "" && !containerPattern.MatchString(*s.Container) {
		warnings = append(warnings, fmt.Sprintf("%s: %q is not a DNS-compatible bucket name (3 to 63 lower-case letters, digits, '.', '-' or '_'); stores that require one will refuse it",
			fld.Child("container"), *s.Container))
	}
	return warnings
}
