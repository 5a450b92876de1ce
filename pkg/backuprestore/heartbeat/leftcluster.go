package heartbeat

import (
	"context"
	"errors"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/scaledown"
)

// AnnotationLeftCluster on a member lease says that the member (the ID in the value, hex) is no longer in
// the etcd membership. The backup leader writes it after a scale-in removed the member; druid shrinks the
// StatefulSet only once every member it drops carries it, and the member's own initializer refuses to
// join the cluster again while it does (equal to druid's LeftClusterAnnotation, kept so by a test).
const AnnotationLeftCluster = "member.etcd.gardener.cloud/left-cluster"

// LeftClusterMarks reads and writes the left-cluster annotation on the member leases of one namespace
// (scaledown.MemberLeases). The sidecar's role may get and update leases.
type LeftClusterMarks struct {
	Kubernetes kubernetes.Interface
	Namespace  string
}

var _ scaledown.MemberLeases = LeftClusterMarks{}

// Get implements scaledown.MemberLeases.
func (m LeftClusterMarks) Get(ctx context.Context, name string) (scaledown.LeaseState, error) {
	lease, err := m.Kubernetes.CoordinationV1().Leases(m.Namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return scaledown.LeaseState{}, scaledown.ErrLeaseNotFound
	}
	if err != nil {
		return scaledown.LeaseState{}, err
	}
	var holderID string
	if h := lease.Spec.HolderIdentity; h != nil && strings.Contains(*h, ":") {
		holderID = (*h)[:strings.IndexByte(*h, ':')]
	}
	return scaledown.LeaseState{HolderMemberID: holderID, Left: lease.Annotations[AnnotationLeftCluster]}, nil
}

// SetLeft implements scaledown.MemberLeases.
func (m LeftClusterMarks) SetLeft(ctx context.Context, name, memberID string) error {
	leases := m.Kubernetes.CoordinationV1().Leases(m.Namespace)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		lease, err := leases.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if memberID == "" {
			delete(lease.Annotations, AnnotationLeftCluster)
		} else {
			metav1.SetMetaDataAnnotation(&lease.ObjectMeta, AnnotationLeftCluster, memberID)
		}
		_, err = leases.Update(ctx, lease, metav1.UpdateOptions{})
		return err
	})
}

// LeftCluster tells whether the member lease name carries the left-cluster annotation: the backup leader
// found its member removed from the membership for a scale-in. A missing lease carries none.
func (m LeftClusterMarks) LeftCluster(ctx context.Context, name string) (bool, error) {
	state, err := m.Get(ctx, name)
	if errors.Is(err, scaledown.ErrLeaseNotFound) {
		return false, nil
	}
	return state.Left != "", err
}
