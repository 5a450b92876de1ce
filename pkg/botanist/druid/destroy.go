package druid

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/gardener-etcd/gardener-etcd/charts"
	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// Destroy removes the chart's objects, the webhook secret and the CRDs — after checking, cluster-wide, that
// no Etcd and no EtcdCopyBackupsTask exists (including ones being deleted, which still need druid to remove
// their finalizers). The namespace is left: a seed's garden namespace holds far more than druid.
func (b *bootstrap) Destroy(ctx context.Context) error {
	if err := b.refuseWhileInUse(ctx); err != nil {
		return err
	}
	objects, err := b.render(nil)
	if err != nil {
		return err
	}
	var toDelete []client.Object
	for _, obj := range objects {
		toDelete = append(toDelete, obj)
	}
	for _, obj := range OptionalWebhookConfigurations() {
		if !isRendered(objects, obj) {
			toDelete = append(toDelete, obj)
		}
	}
	toDelete = append(toDelete, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: WebhookSecretName, Namespace: b.namespace}})
	crds, err := charts.CRDs(charts.EtcdDruid)
	if err != nil {
		return err
	}
	for _, crd := range crds {
		toDelete = append(toDelete, crd)
	}
	for _, obj := range toDelete {
		if err := client.IgnoreNotFound(b.client.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground))); err != nil {
			return fmt.Errorf("deleting %T %s: %w", obj, obj.GetName(), err)
		}
	}
	logf.FromContext(ctx).V(1).Info("Removed etcd-druid", "namespace", b.namespace, "objects", len(toDelete))
	return nil
}

// refuseWhileInUse returns *InUseError naming every Etcd, EtcdCopyBackupsTask and EtcdOpsTask of the
// cluster (a finished EtcdOpsTask counts until druid deletes it after its TTL). A missing
// CRD means there can be none.
func (b *bootstrap) refuseWhileInUse(ctx context.Context) error {
	var inUse []string
	etcds := &druidv1alpha1.EtcdList{}
	if err := b.client.List(ctx, etcds); err != nil && !meta.IsNoMatchError(err) {
		return fmt.Errorf("listing Etcds: %w", err)
	}
	for _, e := range etcds.Items {
		inUse = append(inUse, "Etcd "+e.Namespace+"/"+e.Name)
	}
	tasks := &druidv1alpha1.EtcdCopyBackupsTaskList{}
	if err := b.client.List(ctx, tasks); err != nil && !meta.IsNoMatchError(err) {
		return fmt.Errorf("listing EtcdCopyBackupsTasks: %w", err)
	}
	for _, t := range tasks.Items {
		inUse = append(inUse, "EtcdCopyBackupsTask "+t.Namespace+"/"+t.Name)
	}
	opsTasks := &druidv1alpha1.EtcdOpsTaskList{}
	if err := b.client.List(ctx, opsTasks); err != nil && !meta.IsNoMatchError(err) {
		return fmt.Errorf("listing EtcdOpsTasks: %w", err)
	}
	for _, t := range opsTasks.Items {
		inUse = append(inUse, "EtcdOpsTask "+t.Namespace+"/"+t.Name)
	}
	if len(inUse) > 0 {
		return &InUseError{Resources: inUse}
	}
	return nil
}
