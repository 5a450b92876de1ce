package statefulset

import (
	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupsecret"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
)

// Local provider facts (shared/reference/backup-restore.md).
const (
	// LocalHostPathKey is the backup secret key naming the node directory that holds the buckets.
	LocalHostPathKey = backupsecret.KeyHostPath
	// DefaultLocalHostPath is used when the backup secret has no hostPath.
	DefaultLocalHostPath = config.DefaultLocalBackupHostPath
	// DefaultLocalContainer is the sidecar's container when spec.backup.store.container is unset.
	DefaultLocalContainer = "default.bkp"
)

// storageProvider returns the canonical provider of the Etcd's store, or "" without a store or provider.
func storageProvider(etcd *druidv1alpha1.Etcd) druidv1alpha1.StorageProvider {
	return CanonicalProvider(etcd.Spec.Backup.Store)
}

// localContainer is the Local provider's container directory name.
func localContainer(etcd *druidv1alpha1.Etcd) string { return LocalContainer(etcd.Spec.Backup.Store) }
