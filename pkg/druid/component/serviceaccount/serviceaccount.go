// Package serviceaccount manages the etcd pods' ServiceAccount `<n>`: the identity under which the
// backup-restore sidecar renews its member and snapshot leases (granted by the Role of package role).
package serviceaccount

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
)

// New returns the ServiceAccount operator.
func New(c component.Clients) component.Operator {
	return &component.SingleObject[*corev1.ServiceAccount]{
		Client:    c,
		Kind:      component.KindServiceAccount,
		Component: druidv1alpha1.ComponentServiceAccount,
		Empty: func(etcd *druidv1alpha1.Etcd) *corev1.ServiceAccount {
			return &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: druidv1alpha1.ServiceAccountName(etcd), Namespace: etcd.Namespace}}
		},
		Desired: func(context.Context, *druidv1alpha1.Etcd, *corev1.ServiceAccount) error { return nil },
	}
}
