package v1alpha1

import (
	"maps"
	"slices"
)

// storageProviderAliases maps every provider name an Etcd may carry — the canonical names and the aliases
// Gardener writes (its infrastructure names) — to the canonical name the sidecar's --storage-provider flag
// expects. It is the only such table: druid, the sidecar and the Gardener side all resolve names with
// CanonicalStorageProvider.
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
}

// CanonicalStorageProvider resolves a provider name or alias (aws → S3, azure → ABS, gcp → GCS,
// openstack → Swift, alicloud → OSS, dell → ECS, openshift → OCS) to its canonical name. ok is false for
// a name that is neither; names are case-sensitive, as the deployed components compare them.
func CanonicalStorageProvider(p StorageProvider) (canonical StorageProvider, ok bool) {
	canonical, ok = storageProviderAliases[p]
	return canonical, ok
}

// KnownStorageProviders lists every accepted provider name, canonical names and aliases, sorted.
func KnownStorageProviders() []StorageProvider {
	return slices.Sorted(maps.Keys(storageProviderAliases))
}
