package health

import (
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// MayStillBeMember tells from a member lease whether its member may still be in the etcd membership, which
// is what a scale-in waits for before the member's pod may go. It errs towards "still a member": only the
// backup leader's left-cluster annotation says otherwise, when it names the member ID of the lease's
// holderIdentity or the lease names none (LeftClusterNeverJoined on a lease never renewed). The leader
// wrote it after it removed that member, or after it found that member absent from the membership. A
// member that joined again since renews the lease with a new ID, which the annotation does not name.
//
// A lease never renewed is not evidence on its own: the member leases are recreated empty when a
// hibernated cluster wakes up, while the volumes hold every voter, and a learner promoted before its first
// renewal is a voter too. A missing lease (nil) may belong to a member whose sidecar cannot renew it:
// still a member.
func MayStillBeMember(lease *coordinationv1.Lease) bool {
	if lease == nil {
		return true
	}
	left, marked := lease.Annotations[druidv1alpha1.LeftClusterAnnotation]
	holder, named := ParseHolderIdentity(ptr.Deref(lease.Spec.HolderIdentity, ""))
	return !marked || (named && holder.MemberID != left)
}
