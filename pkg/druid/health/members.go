package health

import (
	"sort"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// Thresholds are the grace periods of member health: a member whose lease was not renewed for
// Unknown is Unknown (NotReady if its pod is not ready either), and NotReady after Unknown + NotReady.
type Thresholds struct {
	Unknown  time.Duration
	NotReady time.Duration
}

// MemberStatus derives one member's status from its lease and pod at time now. It returns false for a
// lease that was never renewed: that member has not bootstrapped and is not part of the cluster yet.
// A nil pod means the pod does not exist.
func MemberStatus(lease *coordinationv1.Lease, pod *corev1.Pod, th Thresholds, now time.Time) (druidv1alpha1.EtcdMemberStatus, bool) {
	if lease.Spec.RenewTime == nil {
		return druidv1alpha1.EtcdMemberStatus{}, false
	}
	member := druidv1alpha1.EtcdMemberStatus{Name: lease.Name}
	if h, ok := ParseHolderIdentity(ptr.Deref(lease.Spec.HolderIdentity, "")); ok {
		member.ID = ptr.To(h.MemberID)
		member.Role = ptr.To(h.Role)
	}
	elapsed := now.Sub(lease.Spec.RenewTime.Time)
	switch {
	case elapsed > th.Unknown+th.NotReady:
		member.Status, member.Reason = druidv1alpha1.EtcdMemberStatusNotReady, druidv1alpha1.MemberReasonUnknownGracePeriodExceeded
	case elapsed > th.Unknown && !PodReady(pod):
		member.Status, member.Reason = druidv1alpha1.EtcdMemberStatusNotReady, druidv1alpha1.MemberReasonPodNotReady
	case elapsed > th.Unknown:
		member.Status, member.Reason = druidv1alpha1.EtcdMemberStatusUnknown, druidv1alpha1.MemberReasonLeaseExpired
	default:
		member.Status, member.Reason = druidv1alpha1.EtcdMemberStatusReady, druidv1alpha1.MemberReasonLeaseSucceeded
	}
	return member, true
}

// PodReady tells whether pod exists and its Ready condition is True.
func PodReady(pod *corev1.Pod) bool {
	if pod == nil {
		return false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Members derives status.members from the member leases of etcd, sorted by ordinal. pods are keyed by pod
// name. A member whose sidecar freshly reports that it lost its data while no member has a leader is
// NotReady (MemberReasonDataLost) whatever its lease's age, unless its pod is Ready. A member keeps its previous lastTransitionTime while its status does not change, so that the
// decision table can tell how long a member has been Unknown or NotReady.
func Members(etcd *druidv1alpha1.Etcd, leases []coordinationv1.Lease, pods map[string]*corev1.Pod, th Thresholds, now time.Time) []druidv1alpha1.EtcdMemberStatus {
	previous := make(map[string]druidv1alpha1.EtcdMemberStatus, len(etcd.Status.Members))
	for _, m := range etcd.Status.Members {
		previous[m.Name] = m
	}
	var members []druidv1alpha1.EtcdMemberStatus
	freshness := NoLeaderReportFreshness(etcd)
	for i := range leases {
		lease := &leases[i]
		pod := pods[podNameOf(etcd, lease.Name)]
		member, ok := MemberStatus(lease, pod, th, now)
		if !ok {
			continue
		}
		if report, fresh := FreshNoLeaderReport(lease, freshness, now); fresh && !report.MemberData && !PodReady(pod) {
			member.Status, member.Reason = druidv1alpha1.EtcdMemberStatusNotReady, MemberReasonDataLost
		}
		member.LastTransitionTime = metav1.NewTime(now)
		if prev, found := previous[member.Name]; found && prev.Status == member.Status {
			member.LastTransitionTime = prev.LastTransitionTime
		}
		members = append(members, member)
	}
	sort.SliceStable(members, func(i, j int) bool { return memberLess(etcd, members[i].Name, members[j].Name) })
	return members
}

// podNameOf maps a member (lease) name to its pod name: they differ only with spec.memberNamePrefix.
func podNameOf(etcd *druidv1alpha1.Etcd, memberName string) string {
	if ordinal, ok := druidv1alpha1.OrdinalOf(etcd, memberName); ok {
		return druidv1alpha1.PodName(etcd, ordinal)
	}
	return memberName
}

func memberLess(etcd *druidv1alpha1.Etcd, a, b string) bool {
	oa, okA := druidv1alpha1.OrdinalOf(etcd, a)
	ob, okB := druidv1alpha1.OrdinalOf(etcd, b)
	if okA && okB {
		return oa < ob
	}
	if okA != okB {
		return okA
	}
	return a < b
}
