package heartbeat

import (
	"context"
	"slices"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// AnnotationAlarms lists the etcd alarms active in the cluster (NOSPACE, CORRUPT; comma-separated,
// sorted) as the member's sidecar read them at its last renewal: "" when none, absent when the last read
// failed. Druid turns it into the Etcd's EtcdAlarm condition; the annotation being there at all tells
// druid that the sidecar reports alarms (equal to druid's AlarmsAnnotation, kept so by a test).
const AnnotationAlarms = "member.etcd.gardener.cloud/alarms"

// AnnotationNoSpaceCannotRecover is set on the backup leader's lease while its NOSPACE recovery cannot
// disarm the alarm, with the reason (the data in use does not fit under the quota); absent otherwise
// (equal to druid's NoSpaceCannotRecoverAnnotation, kept so by a test).
const AnnotationNoSpaceCannotRecover = "member.etcd.gardener.cloud/nospace-cannot-recover"

// alarmReadTimeout bounds the alarm read of one renewal: etcd serves alarm requests through raft, and a
// cluster without quorum must not hold up the lease renewal.
const alarmReadTimeout = 2 * time.Second

// activeAlarms reads the cluster's active alarms, by type name. ok is false when they could not be read;
// the annotation is then removed until a read succeeds (druid counts only members that report).
func activeAlarms(ctx context.Context, cli *clientv3.Client) (alarms string, ok bool) {
	ctx, cancel := context.WithTimeout(ctx, alarmReadTimeout)
	defer cancel()
	resp, err := cli.AlarmList(ctx)
	if err != nil {
		return "", false
	}
	var names []string
	for _, a := range resp.Alarms {
		if name := a.Alarm.String(); !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return strings.Join(names, ","), true
}
