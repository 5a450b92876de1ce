package statefulset

import (
	corev1 "k8s.io/api/core/v1"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
)

// An Etcd may override each of druid's configured images (spec.etcd.image, spec.backup.image); otherwise
// druid's images are used, so that upgrading druid rolls out new images to every cluster that does not
// pin one.

// etcdImage is the image of the `etcd` container (the etcd wrapper).
func etcdImage(images config.Images, etcd *druidv1alpha1.Etcd) string {
	if etcd.Spec.Etcd.Image != nil && *etcd.Spec.Etcd.Image != "" {
		return *etcd.Spec.Etcd.Image
	}
	return images.EtcdWrapper
}

// backupRestoreImage is the image of the `backup-restore` container (etcdbrctl).
func backupRestoreImage(images config.Images, etcd *druidv1alpha1.Etcd) string {
	if etcd.Spec.Backup.Image != nil && *etcd.Spec.Backup.Image != "" {
		return *etcd.Spec.Backup.Image
	}
	return images.BackupRestore
}

// ContainerImages maps the names of a pod template's containers to their images.
func ContainerImages(template corev1.PodTemplateSpec) map[string]string {
	images := make(map[string]string, len(template.Spec.Containers))
	for _, c := range template.Spec.Containers {
		images[c.Name] = c.Image
	}
	return images
}

// ContainerImages maps the names of the rendered template's containers to their images.
func (r *Rendered) ContainerImages() map[string]string { return ContainerImages(r.template) }
