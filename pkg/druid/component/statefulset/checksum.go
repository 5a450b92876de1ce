package statefulset

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/configmap"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/storeaccess"
)

// Rendered is the pod template of one defaulted Etcd object and its checksum, the value Sync records in
// PodTemplateChecksumAnnotation. Comparing Checksum with the existing StatefulSet's annotation tells,
// before anything is synced, whether a sync would roll the members — which the spec flow's rolling-update
// gate holds back while the cluster is unhealthy. The gate hands the rendering it decided on to
// SyncPlanned, so that a spec run renders the template once.
type Rendered struct {
	// etcd is the object the template was rendered from; Sync uses the rendering only for that object.
	etcd     *druidv1alpha1.Etcd
	template corev1.PodTemplateSpec
	Checksum string
}

// Render renders the pod template of etcd: the ConfigMap data for its checksum, the Local provider's host
// path (a read of the backup secret) and the template itself.
func Render(ctx context.Context, c client.Reader, images config.Images, localBackup config.LocalBackup, etcd *druidv1alpha1.Etcd) (*Rendered, error) {
	data, err := configmap.Render(etcd)
	if err != nil {
		return nil, component.WrapError(err, component.OperationSync, kind, "rendering the etcd configuration for its checksum")
	}
	local, err := storeaccess.ResolveLocalStore(ctx, c, etcd.Spec.Backup.Store, storeaccess.EtcdContainerField, etcd.Namespace, volumeLocalStore, localBackup)
	if err != nil {
		return nil, component.WrapError(err, component.OperationSync, kind, "the Local provider's host path")
	}
	brImage, wrapperImage := backupRestoreImage(images, etcd), etcdImage(images, etcd)
	noticeOnce(ctx, etcd, brImage, wrapperImage, images.Compatibility.For(brImage, wrapperImage))
	template := podTemplate(etcd, renderInput{images: images, configChecksum: configmap.Checksum(data), local: local})
	checksum, err := templateChecksum(template)
	if err != nil {
		return nil, component.WrapError(err, component.OperationSync, kind, "computing the pod template checksum")
	}
	return &Rendered{etcd: etcd, template: template, Checksum: checksum}, nil
}
