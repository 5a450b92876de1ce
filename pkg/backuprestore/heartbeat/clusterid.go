package heartbeat

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// ClusterIDRecords reads the etcd cluster IDs the member leases of one namespace record: every renewal
// writes the cluster ID the member's etcd answered with into the holder identity (HolderIdentity). The
// leases live as long as their Etcd and outlive its volumes, so they tell a member that lost its data
// which cluster its Etcd runs.
type ClusterIDRecords struct {
	Kubernetes kubernetes.Interface
	Namespace  string
}

// ClusterIDs returns the distinct cluster IDs, sorted, that the leases among names record. A missing
// lease, one never renewed, and the older two-part holder identity `<memberID>:<role>` record none. Any
// error other than a missing lease is returned: the caller cannot tell then.
func (r ClusterIDRecords) ClusterIDs(ctx context.Context, names []string) ([]uint64, error) {
	var ids []uint64
	err := visitLeases(ctx, r.Kubernetes, r.Namespace, names, func(lease *coordinationv1.Lease) bool {
		if h := lease.Spec.HolderIdentity; h != nil {
			if id, ok := ClusterIDOf(*h); ok {
				ids = append(ids, id)
			}
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(ids)
	return slices.Compact(ids), nil
}

// AnnotationJoinedExistingCluster on a member lease says that the Etcd's members joined the existing
// cluster its spec.etcd.bootstrapWithExistingCluster names; druid writes it (equal to druid's
// JoinedExistingClusterAnnotation, kept so by a test).
const AnnotationJoinedExistingCluster = "member.etcd.gardener.cloud/joined-existing-cluster"

// JoinedExistingCluster tells whether any of the leases among names carries druid's joined mark
// (AnnotationJoinedExistingCluster): the Etcd joined its source cluster before, so an answering cluster
// is no longer the Etcd's just because it answers. A missing lease carries none; any other error is
// returned.
func (r ClusterIDRecords) JoinedExistingCluster(ctx context.Context, names []string) (bool, error) {
	joined := false
	err := visitLeases(ctx, r.Kubernetes, r.Namespace, names, func(lease *coordinationv1.Lease) bool {
		joined = lease.Annotations[AnnotationJoinedExistingCluster] == "true"
		return !joined
	})
	return joined, err
}

// visitLeases reads the member leases among names in order and hands each to visit until it returns
// false. A missing lease is skipped; any other error ends the walk and is returned.
func visitLeases(ctx context.Context, kube kubernetes.Interface, namespace string, names []string, visit func(*coordinationv1.Lease) bool) error {
	leases := kube.CoordinationV1().Leases(namespace)
	for _, name := range names {
		lease, err := leases.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("reading member lease %s/%s: %w", namespace, name, err)
		}
		if !visit(lease) {
			return nil
		}
	}
	return nil
}

// ClusterIDOf reads the cluster ID of a holder identity `<memberID hex>:<clusterID hex>:<role>`; false
// for any other form.
func ClusterIDOf(holder string) (uint64, bool) {
	parts := strings.Split(holder, ":")
	if len(parts) != 3 {
		return 0, false
	}
	id, err := strconv.ParseUint(parts[1], 16, 64)
	return id, err == nil && id != 0
}
