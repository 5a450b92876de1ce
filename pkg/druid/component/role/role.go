// Package role manages the Role `druid.gardener.cloud:etcd:<n>`: exactly the permissions the
// backup-restore sidecar needs (renew leases, read its StatefulSet and pods) and nothing more, so that a
// compromised etcd pod cannot touch anything else in the namespace.
package role

import (
	"context"

	coordinationv1 "k8s.io/api/coordination/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
)

// New returns the Role operator; rules added by hand are overwritten.
func New(c component.Clients) component.Operator {
	return &component.SingleObject[*rbacv1.Role]{
		Client:    c,
		Kind:      component.KindRole,
		Component: druidv1alpha1.ComponentRole,
		Empty: func(etcd *druidv1alpha1.Etcd) *rbacv1.Role {
			return &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: etcd.RoleName(), Namespace: etcd.Namespace}}
		},
		Desired: func(_ context.Context, _ *druidv1alpha1.Etcd, role *rbacv1.Role) error {
			role.Rules = Rules()
			return nil
		},
	}
}

// Rules are the reference's permissions: leases and statefulsets get/list/patch/update/watch, pods
// get/list/watch.
func Rules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{
			APIGroups: []string{coordinationv1.GroupName},
			Resources: []string{"leases"},
			Verbs:     []string{"get", "list", "patch", "update", "watch"},
		},
		{
			APIGroups: []string{"apps"},
			Resources: []string{"statefulsets"},
			Verbs:     []string{"get", "list", "patch", "update", "watch"},
		},
		{
			APIGroups: []string{""},
			Resources: []string{"pods"},
			Verbs:     []string{"get", "list", "watch"},
		},
	}
}
