package memberlease

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
)

var _ component.LabelAdopter = &operator{}

// AdoptLabels labels the member leases of the ordinals below the larger of spec.replicas and the stored
// StatefulSet's replicas (a scale-in may hold it above spec.replicas); leases that do not exist are skipped.
func (o *operator) AdoptLabels(ctx context.Context, etcd *druidv1alpha1.Etcd) ([]string, error) {
	sts := &appsv1.StatefulSet{}
	if err := o.client.Live.Get(ctx, client.ObjectKey{Namespace: etcd.Namespace, Name: druidv1alpha1.StatefulSetName(etcd)}, sts); client.IgnoreNotFound(err) != nil {
		return nil, component.WrapError(err, component.OperationSync, kind, "reading the statefulset's replicas")
	}
	var adopted []string
	for i := 0; i < max(int(etcd.Spec.Replicas), int(ptr.Deref(sts.Spec.Replicas, 0))); i++ {
		lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: etcd.Namespace, Name: druidv1alpha1.MemberLeaseName(etcd, i)}}
		patched, err := component.AdoptMeta(ctx, o.client, lease, etcd, druidv1alpha1.ComponentMemberLease)
		if err != nil {
			return adopted, component.WrapError(err, component.OperationSync, kind, "adopting member lease %s", lease.Name)
		}
		if patched {
			adopted = append(adopted, lease.Name)
		}
	}
	return adopted, nil
}
