package v1alpha1

import (
	"maps"
	"slices"
	"strings"
)

// storageProviderAliases maps every provider name an Etcd may carry — the canonical names and the aliases
// Gardener writes (its infrastructure names) — to the canonical name the sidecar's --storage-provider flag
// expects. It is the only such table: druid, the sidecar and the Gardener side all resolve names with
// CanonicalStorageProvider.
// The storage providers and their aliases as existing landscapes write them.
const (
	StorageProviderLocal     StorageProvider = "Local"
	StorageProviderS3        StorageProvider = "S3"
	StorageProviderAWS       StorageProvider = "aws"
	StorageProviderABS       StorageProvider = "ABS"
	StorageProviderAzure     StorageProvider = "azure"
	StorageProviderGCS       StorageProvider = "GCS"
	StorageProviderGCP       StorageProvider = "gcp"
	StorageProviderSwift     StorageProvider = "Swift"
	StorageProviderOpenStack StorageProvider = "openstack"
	StorageProviderOSS       StorageProvider = "OSS"
	StorageProviderAlicloud  StorageProvider = "alicloud"
	StorageProviderECS       StorageProvider = "ECS"
	StorageProviderDell      StorageProvider = "dell"
	StorageProviderOCS       StorageProvider = "OCS"
	StorageProviderOpenShift StorageProvider = "openshift"
	// StorageProviderStackit is STACKIT's infrastructure name; its object storage is S3-compatible, and the
	// upstream etcd-druid maps it to S3 as well.
	StorageProviderStackit StorageProvider = "stackit"
)

var storageProviderAliases = map[StorageProvider]StorageProvider{
	StorageProviderLocal:     StorageProviderLocal,
	StorageProviderS3:        StorageProviderS3,
	StorageProviderAWS:       StorageProviderS3,
	StorageProviderABS:       StorageProviderABS,
	StorageProviderAzure:     StorageProviderABS,
	StorageProviderGCS:       StorageProviderGCS,
	StorageProviderGCP:       StorageProviderGCS,
	StorageProviderSwift:     StorageProviderSwift,
	StorageProviderOpenStack: StorageProviderSwift,
	StorageProviderOSS:       StorageProviderOSS,
	StorageProviderAlicloud:  StorageProviderOSS,
	StorageProviderECS:       StorageProviderECS,
	StorageProviderDell:      StorageProviderECS,
	StorageProviderOCS:       StorageProviderOCS,
	StorageProviderOpenShift: StorageProviderOCS,
	StorageProviderStackit:   StorageProviderS3,
	// Lower-case spellings that Etcds written for upstream etcd-druid carry (its CRD accepts any string).
	// "local" means Local there too; upstream druid refuses to reconcile the lower-case canonical names,
	// this one maps them, and the validation webhook warns about it (LowerCaseStorageProvider).
	"local": StorageProviderLocal,
	"s3":    StorageProviderS3,
	"abs":   StorageProviderABS,
	"gcs":   StorageProviderGCS,
	"swift": StorageProviderSwift,
	"oss":   StorageProviderOSS,
	"ecs":   StorageProviderECS,
	"ocs":   StorageProviderOCS,
}

// LowerCaseStorageProvider tells whether p is the lower-case spelling of a canonical name other than
// Local ("s3", "abs", …): accepted and mapped here, but not reconciled by upstream etcd-druid.
func LowerCaseStorageProvider(p StorageProvider) bool {
	canonical, ok := storageProviderAliases[p]
	return ok && p != canonical && p != "local" && strings.EqualFold(string(p), string(canonical))
}

// CanonicalStorageProvider resolves a provider name or alias (aws and stackit → S3, azure → ABS, gcp → GCS,
// openstack → Swift, alicloud → OSS, dell → ECS, openshift → OCS, and the lower-case spellings local, s3,
// abs, gcs, swift, oss, ecs, ocs) to its canonical name. ok is false for any other name; names are
// otherwise case-sensitive ("Aws" or "LOCAL" are unknown), as the upstream components compare them.
func CanonicalStorageProvider(p StorageProvider) (canonical StorageProvider, ok bool) {
	canonical, ok = storageProviderAliases[p]
	return canonical, ok
}

// ResolveStorageProvider is p's canonical name, or p as written when it is no known name (which validation
// refuses; callers that meet one pass it on unchanged).
func ResolveStorageProvider(p StorageProvider) StorageProvider {
	if canonical, ok := storageProviderAliases[p]; ok {
		return canonical
	}
	return p
}

// KnownStorageProviders lists every accepted provider name, canonical names and aliases, sorted.
func KnownStorageProviders() []StorageProvider {
	return slices.Sorted(maps.Keys(storageProviderAliases))
}
