package etcdops

import (
	"context"
	"fmt"
	"sort"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Alarm is one active etcd alarm: NOSPACE (a member's database reached its quota; the cluster refuses
// writes until it is disarmed) or CORRUPT (a member's data differs from the others').
type Alarm struct {
	// Member is the member's name, empty when no member has the ID: one that left the cluster, or 0, the
	// sidecar's NOSPACE recovery raising and clearing an alarm to make the members commit.
	Member string `json:"member"`
	// MemberID is the member's ID in hex, as etcdctl and status.members print it.
	MemberID string `json:"memberID"`
	Alarm    string `json:"alarm"`
}

// Alarms lists the cluster's active alarms, with the names of the members that raised them. etcd keeps
// alarms cluster-wide, so any one member answers for all.
func Alarms(ctx context.Context, cli *clientv3.Client) ([]Alarm, error) {
	ctx, cancel := context.WithTimeout(ctx, memberRequestTimeout)
	defer cancel()
	resp, err := cli.AlarmList(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing alarms: %w", err)
	}
	members, err := cli.MemberList(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing members: %w", err)
	}
	names := map[uint64]string{}
	for _, m := range members.Members {
		names[m.GetID()] = m.GetName()
	}
	alarms := make([]Alarm, 0, len(resp.Alarms))
	for _, a := range resp.Alarms {
		alarms = append(alarms, Alarm{Member: names[a.GetMemberID()], MemberID: fmt.Sprintf("%x", a.GetMemberID()), Alarm: a.GetAlarm().String()})
	}
	sort.Slice(alarms, func(i, j int) bool {
		if alarms[i].Member != alarms[j].Member {
			return alarms[i].Member < alarms[j].Member
		}
		return alarms[i].Alarm < alarms[j].Alarm
	})
	return alarms, nil
}
