package v1alpha1

import (
	"path"
	"strings"

	"k8s.io/utils/ptr"
)

// SameLocation tells whether two stores name the same place: the same provider (an alias is its
// canonical name), container and prefix (in its clean form). A copy between them would copy a store onto
// itself (validation refuses such an EtcdCopyBackupsTask), and the Gardener side refuses a migration
// whose destination backs up where its source did.
func SameLocation(s, o StoreSpec) bool {
	return sameProvider(s.Provider, o.Provider) && ptr.Equal(s.Container, o.Container) &&
		CleanStorePrefix(s.Prefix) == CleanStorePrefix(o.Prefix)
}

func sameProvider(a, b *StorageProvider) bool {
	if a == nil || b == nil {
		return a == b
	}
	return ResolveStorageProvider(*a) == ResolveStorageProvider(*b)
}

// CleanStorePrefix is the location a store prefix names, as the sidecar's snapshot keys carry it. Keys are
// joined as paths, as the upstream sidecar joins them, so "bkp//etcd-main/" names "bkp/etcd-main": two
// prefixes with the same clean form are one location.
func CleanStorePrefix(prefix string) string {
	if cleaned := path.Clean(strings.Trim(prefix, "/")); cleaned != "." {
		return cleaned
	}
	return ""
}
