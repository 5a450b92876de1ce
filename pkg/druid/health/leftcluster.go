package health

import (
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// MayStillBeMember tells from a member lease whether its member may still be in the etcd membership, which
// is what a scale-in waits for before the member's pod may go. It errs towards "still a member": only two
// things say otherwise.
//   - The backup leader's left-cluster annotation names the member ID of the lease's holderIdentity (or
//     the lease names none): the leader wrote it after it removed that member, or after it found that member
//     absent from the membership. A member that joined again since renews the lease with a new ID, which
//     the annotation does not name.
//   - The lease was never renewed: no sidecar ever found its member running, so its pod runs no voter
//     whose loss could cost quorum.
//
// A missing lease (nil) may belong to a member whose sidecar cannot renew it: still a member.
func MayStillBeMember(lease *coordinationv1.Lease) bool {
	if lease == nil {
		return true
	}
	left, marked := lease.Annotations[druidv1alpha1.LeftClusterAnnotation]
	holder, named := ParseHolderIdentity(ptr.Deref(lease.Spec.HolderIdentity, ""))
	switch {
	case marked && (!named || holder.MemberID == left):
		return false
	case lease.Spec.RenewTime == nil && !named:
		return false
	default:
		return true
	}
}
