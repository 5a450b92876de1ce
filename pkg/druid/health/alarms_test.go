package health

import (
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// withAnnotations is l with annotations (key, value pairs).
func withAnnotations(l coordinationv1.Lease, kv ...string) coordinationv1.Lease {
	l.Annotations = map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		l.Annotations[kv[i]] = kv[i+1]
	}
	return l
}

// EtcdAlarm follows the alarms the Ready members' sidecars report: none, NOSPACE (being recovered, or not
// recoverable with the backup leader's reason), another alarm; no condition when no Ready member reports.
func TestEtcdAlarmCondition(t *testing.T) {
	ready, notReady := druidv1alpha1.EtcdMemberStatusReady, druidv1alpha1.EtcdMemberStatusNotReady
	alarms, cannot := druidv1alpha1.AlarmsAnnotation, druidv1alpha1.NoSpaceCannotRecoverAnnotation
	three := []druidv1alpha1.EtcdMemberStatus{member("etcd-main-0", ready), member("etcd-main-1", ready), member("etcd-main-2", notReady)}
	for _, tc := range []struct {
		name         string
		members      []druidv1alpha1.EtcdMemberStatus
		leases       []coordinationv1.Lease
		wantReported bool
		wantStatus   druidv1alpha1.ConditionStatus
		wantReason   string
		wantMessage  string
	}{
		{name: "upstream sidecars report nothing", members: three,
			leases: []coordinationv1.Lease{lease("etcd-main-0", "a:c:Leader", 0), lease("etcd-main-1", "b:c:Member", 0)}},
		{name: "no alarm", members: three, wantReported: true, wantStatus: druidv1alpha1.ConditionFalse, wantReason: "NoAlarm",
			leases: []coordinationv1.Lease{withAnnotations(lease("etcd-main-0", "a:c:Leader", 0), alarms, ""), withAnnotations(lease("etcd-main-1", "b:c:Member", 0), alarms, "")}},
		{name: "a NotReady member's stale report does not count", members: three, wantReported: true, wantStatus: druidv1alpha1.ConditionFalse, wantReason: "NoAlarm",
			leases: []coordinationv1.Lease{withAnnotations(lease("etcd-main-0", "a:c:Leader", 0), alarms, ""), withAnnotations(lease("etcd-main-2", "c:c:Member", 0), alarms, "NOSPACE")}},
		{name: "NOSPACE being recovered", members: three, wantReported: true, wantStatus: druidv1alpha1.ConditionTrue, wantReason: "NoSpace",
			wantMessage: "alarm NOSPACE active (reported by etcd-main-0, etcd-main-1): etcd refuses every write until the backup leader's sidecar has compacted, defragmented and disarmed it",
			leases:      []coordinationv1.Lease{withAnnotations(lease("etcd-main-0", "a:c:Leader", 0), alarms, "NOSPACE"), withAnnotations(lease("etcd-main-1", "b:c:Member", 0), alarms, "NOSPACE")}},
		{name: "NOSPACE that cannot be recovered", members: three, wantReported: true, wantStatus: druidv1alpha1.ConditionTrue, wantReason: "NoSpaceCannotRecover",
			wantMessage: "alarm NOSPACE active (reported by etcd-main-1): etcd refuses every write, and the backup leader's recovery cannot disarm it: 9 MiB in use; delete data and compact, or raise spec.etcd.quota",
			leases: []coordinationv1.Lease{withAnnotations(lease("etcd-main-0", "a:c:Leader", 0), alarms, ""),
				withAnnotations(lease("etcd-main-1", "b:c:Member", 0), alarms, "NOSPACE", cannot, "9 MiB in use")}},
		{name: "another alarm", members: three, wantReported: true, wantStatus: druidv1alpha1.ConditionTrue, wantReason: "AlarmActive",
			wantMessage: "alarm CORRUPT active (reported by etcd-main-0)",
			leases:      []coordinationv1.Lease{withAnnotations(lease("etcd-main-0", "a:c:Leader", 0), alarms, "CORRUPT")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, reported := EtcdAlarmCondition(tc.members, tc.leases)
			if reported != tc.wantReported {
				t.Fatalf("reported %t, want %t (%+v)", reported, tc.wantReported, c)
			}
			if !reported {
				return
			}
			if c.Type != druidv1alpha1.ConditionTypeEtcdAlarm || c.Status != tc.wantStatus || c.Reason != tc.wantReason {
				t.Errorf("got %s=%s/%s, want %s/%s", c.Type, c.Status, c.Reason, tc.wantStatus, tc.wantReason)
			}
			if tc.wantMessage != "" && c.Message != tc.wantMessage {
				t.Errorf("message %q, want %q", c.Message, tc.wantMessage)
			}
		})
	}
}
