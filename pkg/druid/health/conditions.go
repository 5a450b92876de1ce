package health

import (
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// SetCondition puts c into conditions, replacing the condition of the same type. lastUpdateTime becomes
// now; lastTransitionTime becomes now only when the status changed, so that consumers (and the decision
// table) can tell how long a condition has held.
func SetCondition(conditions []druidv1alpha1.Condition, c druidv1alpha1.Condition, now time.Time) []druidv1alpha1.Condition {
	c.LastUpdateTime = metav1.NewTime(now)
	c.LastTransitionTime = metav1.NewTime(now)
	out := make([]druidv1alpha1.Condition, 0, len(conditions)+1)
	replaced := false
	for _, existing := range conditions {
		if existing.Type != c.Type {
			out = append(out, existing)
			continue
		}
		if existing.Status == c.Status {
			c.LastTransitionTime = existing.LastTransitionTime
		}
		out = append(out, c)
		replaced = true
	}
	if !replaced {
		out = append(out, c)
	}
	return out
}

// RemoveCondition drops the condition of type t (e.g. BackupReady once the store is removed).
func RemoveCondition(conditions []druidv1alpha1.Condition, t druidv1alpha1.ConditionType) []druidv1alpha1.Condition {
	out := conditions[:0:0]
	for _, c := range conditions {
		if c.Type != t {
			out = append(out, c)
		}
	}
	return out
}

func condition(t druidv1alpha1.ConditionType, s druidv1alpha1.ConditionStatus, reason, message string) druidv1alpha1.Condition {
	return druidv1alpha1.Condition{Type: t, Status: s, Reason: reason, Message: message}
}

// NotChecked is the condition of type t for a hibernated Etcd (spec.replicas 0): nothing runs, so
// nothing is judged. It keeps the status of prev (Unknown without one), as upstream druid does, so
// that a hibernated Etcd reads the same under either druid.
func NotChecked(t druidv1alpha1.ConditionType, prev *druidv1alpha1.Condition) druidv1alpha1.Condition {
	status := druidv1alpha1.ConditionUnknown
	if prev != nil && prev.Status != "" {
		status = prev.Status
	}
	return condition(t, status, druidv1alpha1.ReasonNotChecked, "spec.replicas is 0: the cluster is hibernated")
}

// Quorum is the number of members a cluster of size members needs to make progress.
func Quorum(size int32) int32 { return size/2 + 1 }

// countNotNotReady counts the members that may still vote: Ready and Unknown ones (Unknown has not
// exceeded its grace period, so it is not counted out yet).
func countNotNotReady(members []druidv1alpha1.EtcdMemberStatus) int32 {
	var n int32
	for _, m := range members {
		if m.Status != druidv1alpha1.EtcdMemberStatusNotReady {
			n++
		}
	}
	return n
}

// ReadyCondition is the Ready condition: the cluster is quorate when at least clusterSize/2+1 members are
// not NotReady.
func ReadyCondition(members []druidv1alpha1.EtcdMemberStatus, clusterSize int32) druidv1alpha1.Condition {
	if len(members) == 0 {
		return condition(druidv1alpha1.ConditionTypeReady, druidv1alpha1.ConditionUnknown, druidv1alpha1.ReasonNoMembersInStatus, "no member has renewed its lease yet")
	}
	alive, quorum := countNotNotReady(members), Quorum(clusterSize)
	if m, ok := leaderlessSingleMember(members, clusterSize); ok {
		return condition(druidv1alpha1.ConditionTypeReady, druidv1alpha1.ConditionFalse, druidv1alpha1.ReasonQuorumLost,
			fmt.Sprintf("the only member %s reports no leader: it is still in a larger etcd membership without a quorum of it", m.Name))
	}
	if alive >= quorum {
		return condition(druidv1alpha1.ConditionTypeReady, druidv1alpha1.ConditionTrue, druidv1alpha1.ReasonQuorate,
			fmt.Sprintf("%d of %d members are not NotReady (quorum %d)", alive, clusterSize, quorum))
	}
	return condition(druidv1alpha1.ConditionTypeReady, druidv1alpha1.ConditionFalse, druidv1alpha1.ReasonQuorumLost,
		fmt.Sprintf("only %d of %d members are not NotReady (quorum %d)", alive, clusterSize, quorum))
}

// leaderlessSingleMember finds the one member of a one-member cluster when its lease says it does not lead.
// A member alone in its membership always leads, so role Member means the membership is larger than what
// druid sees: e.g. a scale-in to one whose pods went before their members left, which leaves
// the survivor renewing its lease without a leader. Larger clusters are not judged by roles: the roles of
// their leases trail a leader change by up to a heartbeat, and no lease may name the leader meanwhile.
func leaderlessSingleMember(members []druidv1alpha1.EtcdMemberStatus, clusterSize int32) (druidv1alpha1.EtcdMemberStatus, bool) {
	if clusterSize != 1 || len(members) != 1 {
		return druidv1alpha1.EtcdMemberStatus{}, false
	}
	m := members[0]
	return m, m.Status != druidv1alpha1.EtcdMemberStatusNotReady && m.Role != nil && *m.Role == druidv1alpha1.EtcdRoleMember
}

// AllMembersReadyCondition holds when there are at least replicas members and every one is Ready.
func AllMembersReadyCondition(members []druidv1alpha1.EtcdMemberStatus, replicas int32) druidv1alpha1.Condition {
	t := druidv1alpha1.ConditionTypeAllMembersReady
	if len(members) == 0 {
		return condition(t, druidv1alpha1.ConditionUnknown, druidv1alpha1.ReasonNoMembersInStatus, "no member has renewed its lease yet")
	}
	var notReady []string
	for _, m := range members {
		if m.Status != druidv1alpha1.EtcdMemberStatusReady {
			notReady = append(notReady, fmt.Sprintf("%s (%s: %s)", m.Name, m.Status, m.Reason))
		}
	}
	if len(notReady) > 0 {
		return condition(t, druidv1alpha1.ConditionFalse, druidv1alpha1.ReasonNotAllMembersReady, "members not ready: "+strings.Join(notReady, ", "))
	}
	if int32(len(members)) < replicas {
		return condition(t, druidv1alpha1.ConditionFalse, druidv1alpha1.ReasonNotAllMembersReady,
			fmt.Sprintf("%d of %d members have joined", len(members), replicas))
	}
	return condition(t, druidv1alpha1.ConditionTrue, druidv1alpha1.ReasonAllMembersReady, "all members are ready")
}

// AllMembersUpdatedCondition holds when the StatefulSet controller has observed the current spec and
// every replica runs the current revision.
func AllMembersUpdatedCondition(sts *appsv1.StatefulSet) druidv1alpha1.Condition {
	t := druidv1alpha1.ConditionTypeAllMembersUpdated
	if sts == nil {
		return condition(t, druidv1alpha1.ConditionUnknown, druidv1alpha1.ReasonStatefulSetNotFound, "the StatefulSet does not exist")
	}
	if StatefulSetRolledOut(sts) {
		return condition(t, druidv1alpha1.ConditionTrue, druidv1alpha1.ReasonAllMembersUpdated, "all members run the current revision")
	}
	return condition(t, druidv1alpha1.ConditionFalse, druidv1alpha1.ReasonNotAllMembersUpdated, fmt.Sprintf(
		"%d of %d replicas updated (observed generation %d of %d, revision %q, current %q)",
		sts.Status.UpdatedReplicas, ptr.Deref(sts.Spec.Replicas, 1), sts.Status.ObservedGeneration, sts.Generation,
		sts.Status.UpdateRevision, sts.Status.CurrentRevision))
}

// StatefulSetRolledOut tells whether the StatefulSet controller observed the current generation and every
// replica was updated to the current revision. Under updateStrategy OnDelete the StatefulSet controller
// before Kubernetes v1.37 never moves status.currentRevision to the update revision, so there the replicas
// it counts (updatedReplicas, from each pod's revision label, and replicas) decide alone.
func StatefulSetRolledOut(sts *appsv1.StatefulSet) bool {
	replicas := ptr.Deref(sts.Spec.Replicas, 1)
	if sts.Status.ObservedGeneration < sts.Generation || sts.Status.UpdatedReplicas != replicas {
		return false
	}
	if sts.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType {
		return sts.Status.Replicas == replicas
	}
	return sts.Status.UpdateRevision == sts.Status.CurrentRevision
}

// DataVolumesReadyCondition is False while warning events exist for the members' data volumes (e.g.
// provisioning or attach failures), which the pods' own status does not explain; Unknown without a
// StatefulSet, as in upstream druid.
func DataVolumesReadyCondition(sts *appsv1.StatefulSet, warnings []string) druidv1alpha1.Condition {
	t := druidv1alpha1.ConditionTypeDataVolumesReady
	if sts == nil {
		return condition(t, druidv1alpha1.ConditionUnknown, druidv1alpha1.ReasonStatefulSetNotFound, "the StatefulSet does not exist, so there are no data volumes to judge")
	}
	if len(warnings) > 0 {
		return condition(t, druidv1alpha1.ConditionFalse, druidv1alpha1.ReasonWarningsForDataVolume, strings.Join(warnings, "; "))
	}
	return condition(t, druidv1alpha1.ConditionTrue, druidv1alpha1.ReasonNoWarningsForDataVolume, "no warning events for the data volumes")
}
