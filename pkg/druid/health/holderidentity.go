package health

import (
	"strings"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// HolderIdentity is what a member's sidecar writes into its lease's spec.holderIdentity.
type HolderIdentity struct {
	// MemberID is the etcd member ID in hex.
	MemberID string
	// ClusterID is the etcd cluster ID in hex; empty in the older two-part format.
	ClusterID string
	// Role is Leader or Member.
	Role druidv1alpha1.EtcdRole
}

// ParseHolderIdentity reads `<memberID>:<clusterID>:<role>` and the older sidecars' `<memberID>:<role>`
// (as upstream etcd-druid names them). It returns false for an empty or malformed value, so that a
// lease druid created and no sidecar has renewed yet never yields an ID or role.
func ParseHolderIdentity(s string) (HolderIdentity, bool) {
	parts := strings.Split(s, ":")
	var h HolderIdentity
	switch len(parts) {
	case 2:
		h = HolderIdentity{MemberID: parts[0], Role: druidv1alpha1.EtcdRole(parts[1])}
	case 3:
		h = HolderIdentity{MemberID: parts[0], ClusterID: parts[1], Role: druidv1alpha1.EtcdRole(parts[2])}
	default:
		return HolderIdentity{}, false
	}
	if h.MemberID == "" || (h.Role != druidv1alpha1.EtcdRoleLeader && h.Role != druidv1alpha1.EtcdRoleMember) {
		return HolderIdentity{}, false
	}
	return h, true
}
