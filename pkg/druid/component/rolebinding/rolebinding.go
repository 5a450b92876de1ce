// Package rolebinding manages the RoleBinding `druid.gardener.cloud:etcd:<n>` that grants the Role of
// package role to the etcd pods' ServiceAccount.
package rolebinding

import (
	"context"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
)

const kind = component.KindRoleBinding

type operator struct {
	client client.Client
}

// New returns the RoleBinding operator.
func New(c client.Client) component.Operator {
	return &operator{client: c}
}

func emptyRoleBinding(etcd *druidv1alpha1.Etcd) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: etcd.RoleName(), Namespace: etcd.Namespace}}
}

// Sync creates or patches the RoleBinding. The roleRef of an existing binding is immutable; it only ever
// points at the Role of the same name, so it never needs to change.
func (o *operator) Sync(ctx context.Context, etcd *druidv1alpha1.Etcd) error {
	rb := emptyRoleBinding(etcd)
	result, err := controllerutil.CreateOrPatch(ctx, o.client, rb, func() error {
		component.ApplyManagedMeta(rb, etcd, druidv1alpha1.ComponentRoleBinding)
		rb.RoleRef = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: etcd.RoleName()}
		rb.Subjects = []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: etcd.ServiceAccountName(), Namespace: etcd.Namespace}}
		return nil
	})
	if err != nil {
		return component.WrapError(err, component.OperationSync, kind, "syncing role binding %s", rb.Name)
	}
	log.FromContext(ctx).V(1).Info("Synced role binding", "etcd", client.ObjectKeyFromObject(etcd), "name", rb.Name, "result", result)
	return nil
}

// TriggerDelete deletes the RoleBinding.
func (o *operator) TriggerDelete(ctx context.Context, etcd *druidv1alpha1.Etcd) error {
	rb := emptyRoleBinding(etcd)
	return component.WrapError(component.DeleteIgnoringNotFound(ctx, o.client, rb),
		component.OperationDelete, kind, "deleting role binding %s", rb.Name)
}

// GetExistingResourceNames returns the RoleBinding's name when it exists.
func (o *operator) GetExistingResourceNames(ctx context.Context, etcd *druidv1alpha1.Etcd) ([]string, error) {
	names, err := component.ExistingNames(ctx, o.client, emptyRoleBinding(etcd))
	return names, component.WrapError(err, component.OperationGet, kind, "getting role binding")
}
