// Package configmap manages the ConfigMap `<n>-config` with the etcd configuration template
// (`etcd.conf.yaml`) that every member's sidecar turns into its concrete etcd configuration.
package configmap

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
)

const kind = component.KindConfigMap

type operator struct {
	client client.Client
}

// New returns the ConfigMap operator.
func New(c client.Client) component.Operator {
	return &operator{client: c}
}

func emptyConfigMap(etcd *druidv1alpha1.Etcd) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: etcd.ConfigMapName(), Namespace: etcd.Namespace}}
}

// Sync renders the template and creates or patches the ConfigMap; data under other keys is replaced.
func (o *operator) Sync(ctx context.Context, etcd *druidv1alpha1.Etcd) error {
	data, err := Render(etcd)
	if err != nil {
		return component.WrapError(err, component.OperationSync, kind, "rendering config map %s", etcd.ConfigMapName())
	}
	cm := emptyConfigMap(etcd)
	result, err := controllerutil.CreateOrPatch(ctx, o.client, cm, func() error {
		component.ApplyManagedMeta(cm, etcd, druidv1alpha1.ComponentConfigMap)
		cm.Data = data
		return nil
	})
	if err != nil {
		return component.WrapError(err, component.OperationSync, kind, "syncing config map %s", cm.Name)
	}
	log.FromContext(ctx).V(1).Info("Synced config map", "etcd", client.ObjectKeyFromObject(etcd), "name", cm.Name,
		"checksum", Checksum(data), "result", result)
	return nil
}

// TriggerDelete deletes the ConfigMap.
func (o *operator) TriggerDelete(ctx context.Context, etcd *druidv1alpha1.Etcd) error {
	cm := emptyConfigMap(etcd)
	return component.WrapError(component.DeleteIgnoringNotFound(ctx, o.client, cm),
		component.OperationDelete, kind, "deleting config map %s", cm.Name)
}

// GetExistingResourceNames returns the ConfigMap's name when it exists.
func (o *operator) GetExistingResourceNames(ctx context.Context, etcd *druidv1alpha1.Etcd) ([]string, error) {
	names, err := component.ExistingNames(ctx, o.client, emptyConfigMap(etcd))
	return names, component.WrapError(err, component.OperationGet, kind, "getting config map")
}
