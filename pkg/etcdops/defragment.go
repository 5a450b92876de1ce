package etcdops

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/defrag"
)

// DefragmentedMember is one member a Defragment run defragmented.
type DefragmentedMember struct {
	Member   string `json:"member"`
	MemberID string `json:"memberID"`
	Endpoint string `json:"endpoint"`
	// DBSizeBefore and DBSizeAfter are the database file sizes in bytes around its defragmentation.
	DBSizeBefore int64 `json:"dbSizeBefore"`
	DBSizeAfter  int64 `json:"dbSizeAfter"`
}

// DefragmentResult lists the members in the order they were defragmented.
type DefragmentResult struct {
	Members []DefragmentedMember `json:"members"`
	// LeaderMovedTo is the member leadership was handed to before the leader's turn (empty: not moved).
	LeaderMovedTo string `json:"leaderMovedTo,omitempty"`
}

// Defragment defragments every member once, as the backup leader's sidecar does on its schedule (package
// defrag, the one implementation): only while every member answers, followers first and one at a time,
// the leader last after leadership moved away, so that the cluster keeps a serving majority throughout.
// It does not compact and does not disarm a NOSPACE alarm (the sidecar's NOSPACE recovery does both, and
// a disarm while the data does not fit is raised again at the next write). timeout bounds each member.
func Defragment(ctx context.Context, cli *clientv3.Client, access MemberAccess, timeout time.Duration, log logr.Logger) (DefragmentResult, error) {
	res, err := defrag.Run(ctx, defrag.Options{Client: cli, ClientTLS: access.TLS, Timeout: timeout, RequestTimeout: memberRequestTimeout, Log: log})
	out := DefragmentResult{}
	names := map[uint64]string{}
	for _, m := range res.Members {
		names[m.ID] = m.Name
		out.Members = append(out.Members, DefragmentedMember{
			Member: m.Name, MemberID: fmt.Sprintf("%x", m.ID), Endpoint: m.Endpoint, DBSizeBefore: m.DBSizeBefore, DBSizeAfter: m.DBSizeAfter,
		})
	}
	if res.MovedLeaderTo != 0 {
		out.LeaderMovedTo = fmt.Sprintf("%x", res.MovedLeaderTo)
	}
	if err != nil {
		return out, fmt.Errorf("defragmentation stopped after %d member(s): %w", len(out.Members), err)
	}
	return out, nil
}
