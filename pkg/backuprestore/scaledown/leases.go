package scaledown

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.etcd.io/etcd/api/v3/etcdserverpb"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/initializer"
)

// LeaseState is what the cleanup needs of a member lease.
type LeaseState struct {
	// HolderMemberID is the member ID (hex) the lease's holderIdentity names; empty when the lease was
	// never renewed.
	HolderMemberID string
	// Left is the value of the left-cluster annotation, empty when it is absent.
	Left string
}

// ErrLeaseNotFound is returned by MemberLeases.Get for a lease that does not exist.
var ErrLeaseNotFound = errors.New("member lease not found")

// MemberLeases reads and marks the member leases (named like the members) for the left-cluster annotation
// druid waits for before it shrinks the StatefulSet.
type MemberLeases interface {
	// Get reads a lease; ErrLeaseNotFound when it does not exist.
	Get(ctx context.Context, name string) (LeaseState, error)
	// SetLeft sets the left-cluster annotation to memberID, or removes it when memberID is empty.
	SetLeft(ctx context.Context, name, memberID string) error
}

// maxLeaseOrdinals bounds the walk over the leases <base>-0, <base>-1, … (druid keeps them contiguous).
const maxLeaseOrdinals = 100

// markLeases walks the member leases from ordinal 0 until one is missing. A lease beyond the cluster size
// whose member (the ID its holderIdentity names, its name, or the pod named in a member's peer URL) is not in
// the membership gets the left-cluster annotation: the holder's member ID, or LeftClusterNeverJoined for a
// lease never renewed. Every other lease loses the annotation: below the cluster size the member is wanted
// again (a scale-in undone before it completed) and may join anew; beyond it, a member that is in the
// membership again must be waited for again.
func markLeases(ctx context.Context, opts Options, members []*etcdserverpb.Member, size int) error {
	if opts.Leases == nil {
		return nil
	}
	base, ok := leaseBase(members, opts.LocalMemberID)
	if !ok {
		return nil
	}
	inCluster := map[string]bool{}
	for _, m := range members {
		inCluster[strconv.FormatUint(m.GetID(), 16)] = true
		if m.GetName() != "" {
			inCluster[m.GetName()] = true
		}
		// A learner that has not started yet has no name; its peer URL names its pod.
		for _, u := range m.GetPeerURLs() {
			if pod := podOfPeerURL(u); pod != "" {
				inCluster[pod] = true
			}
		}
	}
	log := opts.Log.WithName("scaledown")
	for i := 0; i < maxLeaseOrdinals; i++ {
		name := fmt.Sprintf("%s-%d", base, i)
		lease, err := opts.Leases.Get(ctx, name)
		if errors.Is(err, ErrLeaseNotFound) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading member lease %s: %w", name, err)
		}
		want := leftMark(i >= size, name, lease, inCluster)
		if lease.Left == want {
			continue
		}
		if err := opts.Leases.SetLeft(ctx, name, want); err != nil {
			return fmt.Errorf("marking member lease %s: %w", name, err)
		}
		if want != "" {
			log.Info("Marked the lease of a member that left the cluster", "member", name, "memberID", want)
		} else {
			log.Info("Cleared the left-cluster mark of a member within the cluster size", "member", name)
		}
	}
	return nil
}

// leftMark is the left-cluster annotation a lease should carry: none for a member within the cluster size
// or still in the membership, else the holder's member ID, or LeftClusterNeverJoined for a lease never
// renewed.
func leftMark(beyondSize bool, name string, lease LeaseState, inCluster map[string]bool) string {
	switch {
	case !beyondSize, inCluster[name], lease.HolderMemberID != "" && inCluster[lease.HolderMemberID]:
		return ""
	case lease.HolderMemberID == "":
		return druidv1alpha1.LeftClusterNeverJoined
	default:
		return lease.HolderMemberID
	}
}

// leaseBase is the local member's name without its ordinal: the leases are <base>-<ordinal>.
func leaseBase(members []*etcdserverpb.Member, localID uint64) (string, bool) {
	for _, m := range members {
		if m.GetID() != localID {
			continue
		}
		name := m.GetName()
		if initializer.Ordinal(name) < 0 {
			return "", false
		}
		return name[:strings.LastIndexByte(name, '-')], true
	}
	return "", false
}
