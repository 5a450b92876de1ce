// Package configmap manages the ConfigMap `<n>-config` with the etcd configuration template
// (`etcd.conf.yaml`) that every member's sidecar turns into its concrete etcd configuration.
package configmap

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
)

// New returns the ConfigMap operator: it renders the template and creates or patches the ConfigMap; data
// under other keys is replaced.
func New(c component.Clients) component.Operator {
	return &component.SingleObject[*corev1.ConfigMap]{
		Client:    c,
		Kind:      component.KindConfigMap,
		Component: druidv1alpha1.ComponentConfigMap,
		Empty: func(etcd *druidv1alpha1.Etcd) *corev1.ConfigMap {
			return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: druidv1alpha1.ConfigMapName(etcd), Namespace: etcd.Namespace}}
		},
		Desired: func(_ context.Context, etcd *druidv1alpha1.Etcd, cm *corev1.ConfigMap) error {
			data, err := Render(etcd)
			cm.Data = data
			return err
		},
	}
}
