package member

import (
	"context"
	"fmt"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Local is the local member as the cluster sees it.
type Local struct {
	// Member is the local member's entry of the member list (ID, name, peer URLs, learner flag).
	Member *etcdserverpb.Member
	// ClusterID identifies the cluster the member belongs to.
	ClusterID uint64
	// Leader is set when the local member leads the cluster.
	Leader bool
	// ClusterSize is the number of members, learners included, in the member list it was found in.
	ClusterSize int
}

// LocalMember asks the member at endpoint who it is (Status) and looks it up in a serializable member
// list. A learner refuses even a serializable member list, so for a learner this fails: look it up (and
// promote it) through a client to the voting members instead, as the sidecar does.
func LocalMember(ctx context.Context, cli *clientv3.Client, endpoint string) (*Local, error) {
	status, err := cli.Status(ctx, endpoint)
	if err != nil {
		return nil, fmt.Errorf("status of the local member at %s: %w", endpoint, err)
	}
	id := status.Header.MemberId
	list, err := cli.MemberList(ctx, clientv3.WithSerializable())
	if err != nil {
		return nil, fmt.Errorf("listing members: %w", err)
	}
	for _, m := range list.Members {
		if m.ID == id {
			return &Local{Member: m, ClusterID: status.Header.ClusterId, Leader: status.Leader == id, ClusterSize: len(list.Members)}, nil
		}
	}
	return nil, fmt.Errorf("local member %x is not in the member list", id)
}
