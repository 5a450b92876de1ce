package statefulset

import druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"

// Images are the container images from druid's configuration. An Etcd may override each one
// (spec.etcd.image, spec.backup.image); otherwise druid's configured images are used, so that upgrading
// druid rolls out new images to every cluster that does not pin one.
type Images struct {
	// Etcd is the etcd wrapper image (container `etcd`).
	Etcd string
	// BackupRestore is the etcdbrctl image (container `backup-restore`).
	BackupRestore string
}

func (i Images) etcdImage(etcd *druidv1alpha1.Etcd) string {
	if etcd.Spec.Etcd.Image != nil && *etcd.Spec.Etcd.Image != "" {
		return *etcd.Spec.Etcd.Image
	}
	return i.Etcd
}

func (i Images) backupRestoreImage(etcd *druidv1alpha1.Etcd) string {
	if etcd.Spec.Backup.Image != nil && *etcd.Spec.Backup.Image != "" {
		return *etcd.Spec.Backup.Image
	}
	return i.BackupRestore
}
