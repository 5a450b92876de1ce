package statefulset

import (
	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/storeaccess"
)

// storageProvider returns the canonical provider of the Etcd's store, or "" without a store or provider.
func storageProvider(etcd *druidv1alpha1.Etcd) druidv1alpha1.StorageProvider {
	return storeaccess.CanonicalProvider(etcd.Spec.Backup.Store)
}
