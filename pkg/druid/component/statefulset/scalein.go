package statefulset

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/health"
)

// EventReasonScaleInHeldBack is the event of a spec reconcile that keeps the StatefulSet at its replica
// count until the members a scale-in drops have left the etcd membership.
const EventReasonScaleInHeldBack = "ScaleInHeldBack"

// scaleInPollPeriod is how often a held scale-in looks at the member leases again. The backup leader
// removes a member per cleanup run (and marks its lease) once its mounted configuration shows the smaller
// cluster, which the kubelet refreshes within a minute or two.
const scaleInPollPeriod = 10 * time.Second

// membersStillInCluster names, highest ordinal first, the members with ordinals desired..current-1 whose
// lease does not show that they left the etcd membership (health.MayStillBeMember).
func (o *operator) membersStillInCluster(ctx context.Context, etcd *druidv1alpha1.Etcd, desired, current int32) ([]string, error) {
	var still []string
	for i := int(current) - 1; i >= int(desired); i-- {
		name := druidv1alpha1.MemberLeaseName(etcd, i)
		lease := &coordinationv1.Lease{}
		err := o.client.Get(ctx, client.ObjectKey{Namespace: etcd.Namespace, Name: name}, lease)
		switch {
		case apierrors.IsNotFound(err):
			lease = nil
		case err != nil:
			return nil, fmt.Errorf("reading member lease %s: %w", name, err)
		}
		if health.MayStillBeMember(lease) {
			still = append(still, name)
		}
	}
	return still, nil
}
