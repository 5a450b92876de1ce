package statefulset

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/configmap"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
)

// DesiredTemplateChecksum is the checksum Sync would record in PodTemplateChecksumAnnotation for the
// defaulted etcd. Comparing it with the existing StatefulSet's annotation tells, before anything is synced,
// whether a sync would roll the members — which the spec flow holds back while the cluster is unhealthy
// (seed 002, "Rolling updates to etcd members").
func DesiredTemplateChecksum(ctx context.Context, c client.Client, images config.Images, etcd *druidv1alpha1.Etcd) (string, error) {
	_, checksum, err := desiredTemplate(ctx, c, images, etcd)
	return checksum, err
}

// desiredTemplate renders the pod template of etcd and its checksum.
func desiredTemplate(ctx context.Context, c client.Client, images config.Images, etcd *druidv1alpha1.Etcd) (corev1.PodTemplateSpec, string, error) {
	data, err := configmap.Render(etcd)
	if err != nil {
		return corev1.PodTemplateSpec{}, "", component.WrapError(err, component.OperationSync, kind, "rendering the etcd configuration for its checksum")
	}
	hostPath, err := LocalHostPath(ctx, c, etcd.Spec.Backup.Store, etcd.Namespace)
	if err != nil {
		return corev1.PodTemplateSpec{}, "", component.WrapError(err, component.OperationSync, kind, "reading the Local provider's host path from the backup secret")
	}
	template := podTemplate(etcd, renderInput{images: images, configChecksum: configmap.Checksum(data), localHostPath: hostPath})
	checksum, err := templateChecksum(template)
	if err != nil {
		return corev1.PodTemplateSpec{}, "", component.WrapError(err, component.OperationSync, kind, "computing the pod template checksum")
	}
	return template, checksum, nil
}
