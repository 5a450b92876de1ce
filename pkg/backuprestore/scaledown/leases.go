package scaledown

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.etcd.io/etcd/api/v3/etcdserverpb"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/initializer"
)

// LeaseState is what the cleanup needs of a member lease.
type LeaseState struct {
	// HolderMemberID is the member ID (hex) the lease's holderIdentity names; empty when the lease was
	// never renewed (the member never ran).
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
// whose member (the ID its holderIdentity names, or its name) is not in the membership gets the
// left-cluster annotation with that ID; a lease never renewed is left alone (druid does not wait for a
// member that never ran). A lease below the cluster size loses the annotation: the member is wanted again
// (a scale-in undone before it completed) and may join anew.
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
		var want string
		if i >= size && lease.HolderMemberID != "" && !inCluster[lease.HolderMemberID] && !inCluster[name] {
			want = lease.HolderMemberID
		}
		if i >= size && want == "" {
			continue // still a member (or never ran): nothing to mark yet
		}
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
