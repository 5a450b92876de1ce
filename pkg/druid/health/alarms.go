package health

import (
	"fmt"
	"slices"
	"strings"

	coordinationv1 "k8s.io/api/coordination/v1"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// EtcdAlarmCondition says whether etcd reports an active alarm, from what the members' sidecars wrote
// into their leases (AlarmsAnnotation). Only Ready members count: a lease that is no longer renewed keeps
// what its member last saw. reported is false when no Ready member's lease carries the annotation (its
// sidecar does not report alarms, as upstream's does not): the Etcd then has no such condition.
func EtcdAlarmCondition(members []druidv1alpha1.EtcdMemberStatus, leases []coordinationv1.Lease) (c druidv1alpha1.Condition, reported bool) {
	byName := make(map[string]*coordinationv1.Lease, len(leases))
	for i := range leases {
		byName[leases[i].Name] = &leases[i]
	}
	var alarms, reporters []string
	cannotRecover := ""
	for _, m := range members {
		lease := byName[m.Name]
		if m.Status != druidv1alpha1.EtcdMemberStatusReady || lease == nil {
			continue
		}
		value, ok := lease.Annotations[druidv1alpha1.AlarmsAnnotation]
		if !ok {
			continue
		}
		reported = true
		if value != "" {
			reporters = append(reporters, m.Name)
		}
		for _, alarm := range strings.Split(value, ",") {
			if alarm != "" && !slices.Contains(alarms, alarm) {
				alarms = append(alarms, alarm)
			}
		}
		if reason := lease.Annotations[druidv1alpha1.NoSpaceCannotRecoverAnnotation]; reason != "" {
			cannotRecover = reason
		}
	}
	t := druidv1alpha1.ConditionTypeEtcdAlarm
	if !reported {
		return druidv1alpha1.Condition{}, false
	}
	if len(alarms) == 0 {
		return condition(t, druidv1alpha1.ConditionFalse, druidv1alpha1.ReasonNoAlarm, "no member reports an active etcd alarm"), true
	}
	slices.Sort(alarms)
	seenBy := fmt.Sprintf("alarm %s active (reported by %s)", strings.Join(alarms, ", "), strings.Join(reporters, ", "))
	switch {
	case !slices.Contains(alarms, "NOSPACE"):
		return condition(t, druidv1alpha1.ConditionTrue, druidv1alpha1.ReasonAlarmActive, seenBy), true
	case cannotRecover != "":
		return condition(t, druidv1alpha1.ConditionTrue, druidv1alpha1.ReasonNoSpaceCannotRecover, seenBy+
			": etcd refuses every write, and the backup leader's recovery cannot disarm it: "+cannotRecover+
			"; delete data and compact, or raise spec.etcd.quota"), true
	default:
		return condition(t, druidv1alpha1.ConditionTrue, druidv1alpha1.ReasonNoSpace, seenBy+
			": etcd refuses every write until the backup leader's sidecar has compacted, defragmented and disarmed it"), true
	}
}
