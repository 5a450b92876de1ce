package initializer

import (
	"fmt"
	"slices"
	"strings"
)

// ownCluster tells the cluster of an Etcd that names an existing (source) cluster from whatever answers at
// the source's client endpoints, which stay among the endpoints the member asks for as long as the source
// is named and may serve another cluster once the source is decommissioned. The Etcd's cluster ID is the
// one its member leases record (Options.OwnClusterID); while none is recorded (before its first member
// served, or after a hibernation removed the leases), the one its own members answer with
// (Options.MemberEndpoints); while none of them answers either, any cluster: the first members join the
// source.
type ownCluster struct {
	// recorded is Options.OwnClusterID, members Options.MemberEndpoints.
	recorded uint64
	members  []string
	// id is the cluster ID answers must carry (0: any); ambiguous is set when the own members answer with
	// different cluster IDs and none is recorded: no answer is accepted then.
	id        uint64
	ambiguous bool
}

// ownClusterOf resolves the cluster ID answers must carry; the zero value (any) for an Etcd without a
// source (own nil).
func ownClusterOf(answers map[string]status, own *ownCluster) ownCluster {
	if own == nil {
		return ownCluster{}
	}
	o := *own
	o.id = o.recorded
	if o.id != 0 {
		return o
	}
	var ids []uint64
	for _, ep := range o.members {
		if st, ok := answers[ep]; ok {
			ids = append(ids, st.clusterID)
		}
	}
	slices.Sort(ids)
	switch ids = slices.Compact(ids); len(ids) {
	case 0:
	case 1:
		o.id = ids[0]
	default:
		o.ambiguous = true
	}
	return o
}

// accepts tells whether an answer with cluster ID id comes from the Etcd's own cluster.
func (o ownCluster) accepts(id uint64) bool { return !o.ambiguous && (o.id == 0 || id == o.id) }

// split returns the endpoints whose answers it accepts, sorted, and the others' answers.
func (o ownCluster) split(answers map[string]status) ([]string, ForeignAnswers) {
	var accepted []string
	var foreign ForeignAnswers
	for ep, st := range answers {
		if o.accepts(st.clusterID) {
			accepted = append(accepted, ep)
			continue
		}
		if foreign == nil {
			foreign = ForeignAnswers{}
		}
		foreign[ep] = st.clusterID
	}
	slices.Sort(accepted)
	return accepted, foreign
}

// String says which cluster is the Etcd's and why, for logs and errors.
func (o ownCluster) String() string {
	switch {
	case o.ambiguous:
		return "unknown: its own members answer with different cluster IDs and its member leases record none"
	case o.recorded != 0:
		return fmt.Sprintf("%x (recorded in its member leases)", o.id)
	case o.id != 0:
		return fmt.Sprintf("%x (its own members answer with it)", o.id)
	}
	return "not known yet"
}

// ForeignAnswers are endpoints and the cluster IDs they answered with.
type ForeignAnswers map[string]uint64

// String lists them sorted, as `<endpoint>=<cluster ID hex>`.
func (a ForeignAnswers) String() string {
	out := make([]string, 0, len(a))
	for ep, id := range a {
		out = append(out, fmt.Sprintf("%s=%x", ep, id))
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}
