package heartbeat

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

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
	leases := r.Kubernetes.CoordinationV1().Leases(r.Namespace)
	var ids []uint64
	for _, name := range names {
		lease, err := leases.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading member lease %s/%s: %w", r.Namespace, name, err)
		}
		if h := lease.Spec.HolderIdentity; h != nil {
			if id, ok := ClusterIDOf(*h); ok {
				ids = append(ids, id)
			}
		}
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
	leases := r.Kubernetes.CoordinationV1().Leases(r.Namespace)
	for _, name := range names {
		lease, err := leases.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return false, fmt.Errorf("reading member lease %s/%s: %w", r.Namespace, name, err)
		}
		if lease.Annotations[AnnotationJoinedExistingCluster] == "true" {
			return true, nil
		}
	}
	return false, nil
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
