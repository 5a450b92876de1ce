// Package rolebinding manages the RoleBinding `druid.gardener.cloud:etcd:<n>` that grants the Role of
// package role to the etcd pods' ServiceAccount.
package rolebinding

import (
	"context"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
)

// New returns the RoleBinding operator. The roleRef of an existing binding is immutable; it only ever
// points at the Role of the same name, so it never needs to change.
func New(c component.Clients) component.Operator {
	return &component.SingleObject[*rbacv1.RoleBinding]{
		Client:    c,
		Kind:      component.KindRoleBinding,
		Component: druidv1alpha1.ComponentRoleBinding,
		Empty: func(etcd *druidv1alpha1.Etcd) *rbacv1.RoleBinding {
			return &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: druidv1alpha1.RoleName(etcd), Namespace: etcd.Namespace}}
		},
		Desired: func(_ context.Context, etcd *druidv1alpha1.Etcd, rb *rbacv1.RoleBinding) error {
			rb.RoleRef = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: druidv1alpha1.RoleName(etcd)}
			rb.Subjects = []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: druidv1alpha1.ServiceAccountName(etcd), Namespace: etcd.Namespace}}
			return nil
		},
	}
}
