package defrag

import (
	"cmp"
	"context"
	"fmt"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Space is a member's database file and quota, as the member's own Status reports them.
type Space struct {
	ID       uint64
	Name     string
	Endpoint string
	// DBSize is the size of the database file; etcd compares it (not DBSizeInUse) with the quota before
	// every write.
	DBSize int64
	// DBSizeInUse is the part of the file that holds data; the rest is free pages that only
	// defragmentation returns.
	DBSizeInUse int64
	// Quota is the member's --quota-backend-bytes (etcd's default when it has none), as its Status reports
	// it, else Options.FallbackQuota.
	Quota int64
}

// Fragmentation is the share of the database file that is free pages (0 for an empty file).
func (s Space) Fragmentation() float64 {
	if s.DBSize <= 0 {
		return 0
	}
	return float64(s.DBSize-s.DBSizeInUse) / float64(s.DBSize)
}

// Reclaimable is what defragmentation would give back: the free pages.
func (s Space) Reclaimable() int64 { return max(s.DBSize-s.DBSizeInUse, 0) }

// cluster is what one survey saw: every member with its space, the leader, the active alarms and the
// cluster's revision.
type cluster struct {
	members  []memberSpace
	leader   *etcdserverpb.Member
	alarms   []*etcdserverpb.AlarmMember
	revision int64
}

// spaces are the members' spaces in member-list order.
func (c cluster) spaces() []Space {
	out := make([]Space, 0, len(c.members))
	for _, m := range c.members {
		out = append(out, m.space)
	}
	return out
}

// noSpace returns the active NOSPACE alarms.
func (c cluster) noSpace() []*etcdserverpb.AlarmMember {
	var out []*etcdserverpb.AlarmMember
	for _, a := range c.alarms {
		if a.GetAlarm() == etcdserverpb.AlarmType_NOSPACE {
			out = append(out, a)
		}
	}
	return out
}

// etcdDefaultQuota is etcd's quota when --quota-backend-bytes is not set (storage.DefaultQuotaBytes).
const etcdDefaultQuota = 2 << 30

// survey asks every member for its status and the cluster for its alarms; a member that has not started
// or does not answer fails it, so that nothing acts on a partial picture. The local member (the one at
// localEndpoint, "" when unknown) is asked there, every other member at its advertised client URL (see
// Options.LocalEndpoint).
func survey(ctx context.Context, cli *clientv3.Client, fallbackQuota int64, localEndpoint string) (cluster, error) {
	var c cluster
	list, err := cli.MemberList(ctx)
	if err != nil {
		return c, fmt.Errorf("listing members: %w", err)
	}
	alarms, err := cli.AlarmList(ctx)
	if err != nil {
		return c, fmt.Errorf("listing alarms: %w", err)
	}
	c.alarms = alarms.Alarms
	var local *clientv3.StatusResponse
	if localEndpoint != "" {
		if local, err = cli.Status(ctx, localEndpoint); err != nil {
			return c, fmt.Errorf("the local member does not answer at %s: %w", localEndpoint, err)
		}
	}
	for _, m := range list.Members {
		if len(m.GetClientURLs()) == 0 {
			return c, fmt.Errorf("member %x has not started", m.GetID())
		}
		ep, st := m.GetClientURLs()[0], local
		if local != nil && local.Header.GetMemberId() == m.GetID() {
			ep = localEndpoint
		} else if st, err = cli.Status(ctx, ep); err != nil {
			return c, fmt.Errorf("member %s does not answer: %w", m.GetName(), err)
		}
		if st.Leader == m.GetID() {
			c.leader = m
		}
		c.revision = max(c.revision, st.Header.GetRevision())
		quota := st.DbSizeQuota
		if quota <= 0 {
			quota = cmp.Or(fallbackQuota, etcdDefaultQuota)
		}
		c.members = append(c.members, memberSpace{member: m, space: Space{
			ID: m.GetID(), Name: m.GetName(), Endpoint: ep, DBSize: st.DbSize, DBSizeInUse: st.DbSizeInUse, Quota: quota,
		}})
	}
	return c, nil
}
