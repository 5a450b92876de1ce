// Package role manages the Role `druid.gardener.cloud:etcd:<n>`: exactly the permissions the
// backup-restore sidecar needs (renew leases, read its StatefulSet and pods) and nothing more, so that a
// compromised etcd pod cannot touch anything else in the namespace.
package role

import (
	"context"

	coordinationv1 "k8s.io/api/coordination/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
)

const kind = component.KindRole

type operator struct {
	client client.Client
}

// New returns the Role operator.
func New(c client.Client) component.Operator {
	return &operator{client: c}
}

func emptyRole(etcd *druidv1alpha1.Etcd) *rbacv1.Role {
	return &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: etcd.RoleName(), Namespace: etcd.Namespace}}
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

// Sync creates or patches the Role; rules added by hand are overwritten.
func (o *operator) Sync(ctx context.Context, etcd *druidv1alpha1.Etcd) error {
	role := emptyRole(etcd)
	result, err := controllerutil.CreateOrPatch(ctx, o.client, role, func() error {
		component.ApplyManagedMeta(role, etcd, druidv1alpha1.ComponentRole)
		role.Rules = Rules()
		return nil
	})
	if err != nil {
		return component.WrapError(err, component.OperationSync, kind, "syncing role %s", role.Name)
	}
	log.FromContext(ctx).V(1).Info("Synced role", "etcd", client.ObjectKeyFromObject(etcd), "name", role.Name, "result", result)
	return nil
}

// TriggerDelete deletes the Role.
func (o *operator) TriggerDelete(ctx context.Context, etcd *druidv1alpha1.Etcd) error {
	role := emptyRole(etcd)
	return component.WrapError(component.DeleteIgnoringNotFound(ctx, o.client, role),
		component.OperationDelete, kind, "deleting role %s", role.Name)
}

// GetExistingResourceNames returns the Role's name when it exists.
func (o *operator) GetExistingResourceNames(ctx context.Context, etcd *druidv1alpha1.Etcd) ([]string, error) {
	names, err := component.ExistingNames(ctx, o.client, emptyRole(etcd))
	return names, component.WrapError(err, component.OperationGet, kind, "getting role")
}
