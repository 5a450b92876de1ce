package storeaccess

import (
	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
)

// Where a pod mounts a backup secret, as upstream druid mounts it. A GCS secret has directories of its own
// because Gardener's GCP extension writes them into a workload-identity secret: its external_account
// configuration reads the subject token from <directory>/token, /var/.gcp/token for a BackupEntry and
// /var/.source-gcp/token for a source- entry (a copy's source store). Mounted anywhere else, the token
// the configuration names would not exist (and the sidecar refuses a configuration whose token is not the
// secret's own).
const (
	// SourceSecretMountPath holds the source store's secret of a copy.
	SourceSecretMountPath = "/var/source-etcd-backup"
	// GCSSecretMountPath holds a GCS store's secret.
	GCSSecretMountPath = "/var/.gcp"
	// GCSSourceSecretMountPath holds a copy's GCS source store's secret.
	GCSSourceSecretMountPath = "/var/.source-gcp"
)

// SecretMountPath is the directory at which a pod mounts the store's backup secret: source tells a copy's
// source store from the store a command writes to.
func SecretMountPath(store *druidv1alpha1.StoreSpec, source bool) string {
	gcs := CanonicalProvider(store) == druidv1alpha1.StorageProviderGCS
	switch {
	case gcs && source:
		return GCSSourceSecretMountPath
	case gcs:
		return GCSSecretMountPath
	case source:
		return SourceSecretMountPath
	}
	return etcdpod.BackupSecretMountPath
}
