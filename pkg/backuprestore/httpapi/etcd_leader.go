package httpapi

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strconv"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// EtcdLeaderResolver makes the etcd leader the backup leader: it is the member whose data is never behind,
// and etcd already elects exactly one. Its sidecar is found from the leader's advertised client URL.
type EtcdLeaderResolver struct {
	Client *clientv3.Client
	// LocalEndpoint is this member's client URL; its Status names both this member and the leader.
	LocalEndpoint string
	// SidecarURL maps a member to its sidecar's base URL; nil means SameHostSidecar(scheme "http", 8080).
	SidecarURL func(m *etcdserverpb.Member) (string, error)
}

// BackupLeader implements LeaderResolver.
func (e *EtcdLeaderResolver) BackupLeader(ctx context.Context) (Leader, error) {
	status, err := e.Client.Status(ctx, e.LocalEndpoint)
	if err != nil {
		return Leader{}, fmt.Errorf("status of %s: %w", e.LocalEndpoint, err)
	}
	if status.Leader == 0 {
		return Leader{}, fmt.Errorf("the cluster has no leader")
	}
	if status.Leader == status.Header.MemberId {
		return Leader{Self: true}, nil
	}
	members, err := e.Client.MemberList(ctx)
	if err != nil {
		return Leader{}, fmt.Errorf("listing members: %w", err)
	}
	for _, m := range members.Members {
		if m.ID == status.Leader {
			toURL := e.SidecarURL
			if toURL == nil {
				toURL = SameHostSidecar("http", 8080)
			}
			u, err := toURL(m)
			return Leader{URL: u}, err
		}
	}
	return Leader{}, fmt.Errorf("leader %x is not in the member list", status.Leader)
}

// SameHostSidecar locates a member's sidecar on the host of its first advertised client URL: in an etcd
// pod both containers share the pod's network identity.
func SameHostSidecar(scheme string, port int) func(m *etcdserverpb.Member) (string, error) {
	return func(m *etcdserverpb.Member) (string, error) {
		if len(m.ClientURLs) == 0 {
			return "", fmt.Errorf("member %s (%x) advertises no client URL", m.Name, m.ID)
		}
		u, err := url.Parse(m.ClientURLs[0])
		if err != nil {
			return "", fmt.Errorf("client URL of member %s: %w", m.Name, err)
		}
		return scheme + "://" + net.JoinHostPort(u.Hostname(), strconv.Itoa(port)), nil
	}
}
