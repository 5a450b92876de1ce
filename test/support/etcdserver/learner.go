package etcdserver

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// StartLearner adds a member named name to the cluster behind cli as a learner and starts it as a
// joining member is configured: the current members plus itself, state existing. etcd refuses membership
// changes until a fresh cluster's members have been connected for a few seconds ("unhealthy cluster"), so
// the addition is retried for up to 30s. The learner is not promoted.
func StartLearner(t testing.TB, cli *clientv3.Client, name string) *Member {
	t.Helper()
	peerURL := FreeURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var added *clientv3.MemberAddResponse
	for {
		var err error
		if added, err = cli.MemberAddAsLearner(ctx, []string{peerURL.String()}); err == nil {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("adding learner %s: %v", name, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
	var initial []string
	for _, m := range added.Members {
		memberName := m.Name
		if m.ID == added.Member.ID {
			memberName = name
		}
		for _, u := range m.PeerURLs {
			initial = append(initial, fmt.Sprintf("%s=%s", memberName, u))
		}
	}
	return StartMember(t, MemberConfig{Name: name, PeerURL: peerURL, ClusterState: "existing", InitialCluster: strings.Join(initial, ",")})
}
