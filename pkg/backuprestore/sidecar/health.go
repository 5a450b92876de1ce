package sidecar

import (
	"context"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// backupFailurePeriods is how many delta snapshot periods uploads may fail before a single member's
// /healthz reports it unhealthy: the same three periods after which druid reports BackupReady=False.
const backupFailurePeriods = 3

// memberHealth is the sidecar's /healthz: the local member answers its status and, for a cluster of
// one member, its backups are not failing for longer than grace. A single member's readiness
// follows the latest backup upload, so that client traffic stops before the gap between the data and
// the last backup grows without bound; a member of a multi-member cluster stays ready (the backup leader
// reports BackupReady instead), since cutting its traffic would endanger the quorum. uploadsFailingSince
// is the snapshotter's (zero while uploads succeed); grace 0 never fails for backups.
func memberHealth(cli *clientv3.Client, endpoint string, uploadsFailingSince func() time.Time, grace time.Duration) func(context.Context) bool {
	etcdOK := etcdHealthy(cli, endpoint)
	return func(ctx context.Context) bool {
		if !etcdOK(ctx) {
			return false
		}
		since := uploadsFailingSince()
		if grace <= 0 || since.IsZero() || time.Since(since) < grace {
			return true
		}
		ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		members, err := cli.MemberList(ctx)
		if err != nil {
			// etcd answered its status a moment ago; without the member list, keep serving.
			return true
		}
		return len(members.Members) > 1
	}
}
