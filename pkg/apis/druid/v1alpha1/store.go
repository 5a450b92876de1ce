package v1alpha1

import "k8s.io/utils/ptr"

// SameLocation tells whether two stores name the same place: the same provider, container and prefix. A copy
// between them would copy a store onto itself (validation refuses such an EtcdCopyBackupsTask), and the
// Gardener side refuses a migration whose destination backs up where its source did.
func SameLocation(s, o StoreSpec) bool {
	return ptr.Equal(s.Provider, o.Provider) && ptr.Equal(s.Container, o.Container) && s.Prefix == o.Prefix
}
