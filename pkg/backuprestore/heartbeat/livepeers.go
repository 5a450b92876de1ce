package heartbeat

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// LivenessWindowBeats is how many heartbeat periods a member lease may go unrenewed before its member
// counts as not alive: one missed or late renewal (a busy node, a slow apiserver) is not a dead member.
const LivenessWindowBeats = 3

// LivePeers returns the members among names whose lease was renewed within window before now. A sidecar
// renews its member's lease only after its etcd answered with the member's identity, so a fresh renewal
// is evidence that the member's etcd served moments ago — even when this member cannot reach it. A lease
// that does not exist, was never renewed, or was reset empty (druid's quorum-loss recovery recreates
// them so) is no such evidence. Any other error is returned: the caller cannot tell.
func LivePeers(ctx context.Context, kube kubernetes.Interface, namespace string, names []string, window time.Duration, now time.Time) ([]string, error) {
	leases := kube.CoordinationV1().Leases(namespace)
	var live []string
	for _, name := range names {
		lease, err := leases.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading member lease %s/%s: %w", namespace, name, err)
		}
		holder, renewed := lease.Spec.HolderIdentity, lease.Spec.RenewTime
		if holder == nil || *holder == "" || renewed == nil {
			continue
		}
		if now.Sub(renewed.Time) < window {
			live = append(live, name)
		}
	}
	return live, nil
}
