package decide

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/health"
)

// Case 14, member relocation: a member whose data volume sits on a node that is gone (or unreachable for
// long) never comes back by itself — its claim's volume is bound to that node, so every new pod stays
// Pending — and an HA cluster would run one member short for ever. Druid deletes the member's claim and
// pod; the StatefulSet creates a new claim (on a live node) and pod, and the new, empty member rejoins
// through the sidecar's wiped-member path (it removes its old member ID from the etcd membership and
// joins as a learner, then is promoted once it caught up). The data is not lost: a quorum of the other
// members holds every committed write, which is why druid relocates only while that quorum is Ready.
//
// Decide names the candidate from what the status flow observed (leases, pods); whether its volume really
// is unreachable needs the claim, its PersistentVolume and the Nodes, which the heal action reads from the
// apiserver and judges with JudgeRelocation.

// ConditionTypeMemberRelocation is druid's own condition (not part of the upstream API) for case 14: True
// with reason MemberRelocating while a member's replacement joins, False with reason MemberRelocated once
// it is Ready, False with reason MemberRelocationHeld (or PermissionsMissing) when a member's volume is
// unreachable but druid may not replace it. The message of every reason starts with "<member>: ".
const ConditionTypeMemberRelocation druidv1alpha1.ConditionType = "MemberRelocation"

// Reasons of the MemberRelocation condition.
const (
	ReasonMemberRelocating     = "MemberRelocating"
	ReasonMemberRelocated      = "MemberRelocated"
	ReasonMemberRelocationHeld = "MemberRelocationHeld"
	// ReasonRelocationPermissionsMissing: druid's role does not allow what the relocation needs (reading
	// PersistentVolumes and Nodes, deleting the claim); nothing is deleted.
	ReasonRelocationPermissionsMissing = "PermissionsMissing"
)

// MovedAsideAnnotation is the member lease annotation in which the member's sidecar lists the data
// directories its initializer moved aside and kept on the volume (written by package
// backuprestore/heartbeat; relocation_test.go checks that both name the same key).
const MovedAsideAnnotation = "member.etcd.gardener.cloud/moved-aside-data-dirs"

// RelocatingMember is the member the stored MemberRelocation condition names as relocating ("" when none).
func RelocatingMember(status druidv1alpha1.EtcdStatus) string {
	c := druidv1alpha1.FindCondition(status.Conditions, ConditionTypeMemberRelocation)
	if c == nil || c.Status != druidv1alpha1.ConditionTrue || c.Reason != ReasonMemberRelocating {
		return ""
	}
	member, _, _ := strings.Cut(c.Message, ":")
	return member
}

// memberRelocation is case 14. It returns
//   - KindMemberRelocated when the member the stored condition names as relocating is Ready again;
//   - otherwise, for the lowest-ordinal member that has been NotReady past the grace period, may not serve
//     and has a pod that does not run (none, unschedulable, terminating, or bound to a node — whether that
//     node is gone is for the action to find out): KindRelocateMember when the other members hold the
//     quorum and no other member is relocating, else KindRelocationHeld saying why. The action judges the
//     volume first and does nothing — not even report — when it is reachable.
//
// Never more than one member at a time: while the condition names a relocating member that is not Ready,
// only that member may be relocated again (its new claim may have landed on a node that died too).
// A single-member cluster is never relocated: its only copy of the data may be on that volume. Nor is a
// member whose lease lists data directories moved aside on the volume: nothing moved aside is ever deleted
// by the stack, and deleting the claim would.
func memberRelocation(in Input) []Action {
	etcd := in.Observed.Etcd
	relocating := RelocatingMember(etcd.Status)
	if relocating != "" {
		for _, m := range in.Computed.Members {
			if m.Name == relocating && m.Status == druidv1alpha1.EtcdMemberStatusReady {
				return []Action{{Case: CaseMemberVolumeUnreachable, Kind: KindMemberRelocated, Members: []string{relocating},
					Message: fmt.Sprintf("%s: the replacement member is Ready", relocating)}}
			}
		}
	}
	candidate, ok := relocationCandidate(in)
	if !ok {
		return nil
	}
	size := clusterSize(in)
	held := func(why string) []Action {
		return []Action{{Case: CaseMemberVolumeUnreachable, Kind: KindRelocationHeld, Members: []string{candidate.Name}, Message: why}}
	}
	if size <= 1 {
		return held("a single-member cluster's only copy of the data may be on that volume: druid does not replace it; " +
			"bring the node back, or restore the cluster from the backup by hand")
	}
	if aside := movedAside(in, candidate.Name); aside != "" {
		return held(fmt.Sprintf("the volume keeps data directories the initializer moved aside (%s), which may hold writes found "+
			"nowhere else: bring the node back and save them, or delete the member's claim and pod by hand", aside))
	}
	if relocating != "" && relocating != candidate.Name {
		return held(fmt.Sprintf("%s is being relocated; one member at a time", relocating))
	}
	if !conditionIs(in.Computed, druidv1alpha1.ConditionTypeReady, druidv1alpha1.ConditionTrue) {
		return held("the cluster is not Ready: the other members must hold the quorum")
	}
	quorum := health.Quorum(size)
	if others := countReady(in.Computed.Members); others < quorum {
		return held(fmt.Sprintf("only %d of %d members are Ready besides it, %d needed for the quorum", others, size, quorum))
	}
	return []Action{{Case: CaseMemberVolumeUnreachable, Kind: KindRelocateMember, Members: []string{candidate.Name}, Replicas: size,
		Message: fmt.Sprintf("%d of %d members Ready", countReady(in.Computed.Members), size)}}
}

// relocationCandidate is the lowest-ordinal member NotReady past the grace period whose pod does not run
// and whose etcd may not serve.
func relocationCandidate(in Input) (druidv1alpha1.EtcdMemberStatus, bool) {
	etcd := in.Observed.Etcd
	for _, m := range notReadyPastGrace(in) {
		ordinal, ok := druidv1alpha1.OrdinalOf(etcd, m.Name)
		if !ok || int32(ordinal) >= etcd.Spec.Replicas || len(maybeServing(in, []druidv1alpha1.EtcdMemberStatus{m})) > 0 {
			continue
		}
		if podNotRunning(in.Observed.Pods[druidv1alpha1.PodName(etcd, ordinal)]) {
			return m, true
		}
	}
	return druidv1alpha1.EtcdMemberStatus{}, false
}

// podNotRunning tells whether a member pod may be one a lost node keeps from running: none, Pending
// without a node (unschedulable, e.g. for a volume node affinity conflict), terminating, or bound to a
// node (which the action checks).
func podNotRunning(pod *corev1.Pod) bool {
	return pod == nil || pod.DeletionTimestamp != nil || pod.Spec.NodeName != "" ||
		(pod.Status.Phase == corev1.PodPending && podUnschedulable(pod))
}

func podUnschedulable(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			return c.Status == corev1.ConditionFalse
		}
	}
	return false
}

// movedAside is what the member's lease lists as moved aside on its volume ("" when nothing).
func movedAside(in Input, member string) string {
	for _, l := range in.Observed.MemberLeases {
		if l.Name == member {
			return l.Annotations[MovedAsideAnnotation]
		}
	}
	return ""
}
