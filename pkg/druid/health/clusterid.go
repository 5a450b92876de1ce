package health

import (
	"fmt"
	"sort"
	"strings"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// ClusterIDMismatchCondition compares the etcd cluster IDs the members write into their leases
// (`<memberID>:<clusterID>:<role>`), as upstream druid does: members of one cluster share its ID, so a
// second ID means a member bootstrapped a cluster of its own and its data diverges. Members whose status
// is Unknown, and leases without an ID (not renewed yet, or the older two-part format), are not counted.
func ClusterIDMismatchCondition(members []druidv1alpha1.EtcdMemberStatus, leases []coordinationv1.Lease) druidv1alpha1.Condition {
	holders := make(map[string]string, len(leases))
	for _, l := range leases {
		holders[l.Name] = ptr.Deref(l.Spec.HolderIdentity, "")
	}
	byID := map[string][]string{}
	for _, m := range members {
		holder := holders[m.Name]
		if m.Status == druidv1alpha1.EtcdMemberStatusUnknown || holder == "" {
			continue
		}
		id, ok := ParseHolderIdentity(holder)
		if !ok {
			return condition(druidv1alpha1.ConditionTypeClusterIDMismatch, druidv1alpha1.ConditionUnknown, druidv1alpha1.ReasonUnparsableHolderIdentity,
				fmt.Sprintf("lease %s: holder identity %q is neither <memberID>:<clusterID>:<role> nor <memberID>:<role>", m.Name, holder))
		}
		if id.ClusterID != "" {
			byID[id.ClusterID] = append(byID[id.ClusterID], m.Name)
		}
	}
	switch len(byID) {
	case 0:
		return condition(druidv1alpha1.ConditionTypeClusterIDMismatch, druidv1alpha1.ConditionUnknown, druidv1alpha1.ReasonNoClusterID,
			"no member that is not Unknown has written a cluster ID into its lease")
	case 1:
		return condition(druidv1alpha1.ConditionTypeClusterIDMismatch, druidv1alpha1.ConditionFalse, druidv1alpha1.ReasonNoClusterIDMismatch,
			"all members report the same cluster ID")
	}
	groups := make([]string, 0, len(byID))
	for id, names := range byID {
		groups = append(groups, fmt.Sprintf("%s: %s", id, strings.Join(names, ", ")))
	}
	sort.Strings(groups)
	return condition(druidv1alpha1.ConditionTypeClusterIDMismatch, druidv1alpha1.ConditionTrue, druidv1alpha1.ReasonMultipleClusterIDs,
		"members report different cluster IDs ("+strings.Join(groups, "; ")+")")
}
