// Package serviceaccount manages the etcd pods' ServiceAccount `<n>`: the identity under which the
// backup-restore sidecar renews its member and snapshot leases (granted by the Role of package role).
package serviceaccount

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

const kind = component.KindServiceAccount

type operator struct {
	client client.Client
}

// New returns the ServiceAccount operator.
func New(c client.Client) component.Operator {
	return &operator{client: c}
}

func emptyServiceAccount(etcd *druidv1alpha1.Etcd) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: etcd.ServiceAccountName(), Namespace: etcd.Namespace}}
}

// Sync creates or patches the ServiceAccount.
func (o *operator) Sync(ctx context.Context, etcd *druidv1alpha1.Etcd) error {
	sa := emptyServiceAccount(etcd)
	result, err := controllerutil.CreateOrPatch(ctx, o.client, sa, func() error {
		component.ApplyManagedMeta(sa, etcd, druidv1alpha1.ComponentServiceAccount)
		return nil
	})
	if err != nil {
		return component.WrapError(err, component.OperationSync, kind, "syncing service account %s", sa.Name)
	}
	log.FromContext(ctx).V(1).Info("Synced service account", "etcd", client.ObjectKeyFromObject(etcd), "name", sa.Name, "result", result)
	return nil
}

// TriggerDelete deletes the ServiceAccount.
func (o *operator) TriggerDelete(ctx context.Context, etcd *druidv1alpha1.Etcd) error {
	sa := emptyServiceAccount(etcd)
	return component.WrapError(component.DeleteIgnoringNotFound(ctx, o.client, sa),
		component.OperationDelete, kind, "deleting service account %s", sa.Name)
}

// GetExistingResourceNames returns the ServiceAccount's name when it exists.
func (o *operator) GetExistingResourceNames(ctx context.Context, etcd *druidv1alpha1.Etcd) ([]string, error) {
	names, err := component.ExistingNames(ctx, o.client, emptyServiceAccount(etcd))
	return names, component.WrapError(err, component.OperationGet, kind, "getting service account")
}
