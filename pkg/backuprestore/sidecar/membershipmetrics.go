package sidecar

import (
	"context"
	"time"

	"github.com/go-logr/logr"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/member"
)

// membershipMetricsPeriod is how often etcdbr_cluster_size and etcdbr_is_learner are refreshed: the
// membership changes between initializations too (a scale-up adds learners, the backup leader removes
// members beyond the replicas), not only when this member joins.
const membershipMetricsPeriod = 15 * time.Second

// observeMembership refreshes the membership metrics every period until ctx ends. A round in which the
// local member does not answer leaves them as they were: the member's health shows elsewhere.
func observeMembership(ctx context.Context, cli, clusterCli *clientv3.Client, endpoint string, metrics *member.Metrics, period time.Duration, log logr.Logger) {
	for {
		if local, err := lookupLocalMember(ctx, cli, clusterCli, endpoint); err == nil {
			metrics.Observe(local)
		} else {
			log.V(1).Info("Membership metrics not refreshed: the local member does not answer", "error", err.Error())
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(period):
		}
	}
}
