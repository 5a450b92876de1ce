package initializer

import (
	"fmt"
	"slices"
	"strings"
)

// ownCluster tells the cluster of an Etcd that names an existing (source) cluster from whatever answers at
// the source's client endpoints, which stay among the endpoints the member asks for as long as the source
// is named and may serve another cluster once the source is decommissioned. In this order, the Etcd's
// cluster ID is:
//   - the one its member leases record (Options.OwnClusterID);
//   - while none is recorded (before its first member served, after a hibernation removed the leases, with
//     member lease renewal off, after an upgrade from sidecars that record none), the one its own members
//     answer with (Options.MemberEndpoints);
//   - while none of them answers either, the one this member's valid data carries: a member that ran
//     before belongs to the cluster its data is from, and taking any answering cluster instead would move
//     that valid data aside and add the member to a cluster that is not the Etcd's;
//   - only for a member without data of its own while the Etcd never joined (the first join: no joined
//     mark, Options.JoinedExistingCluster), the cluster that answers, and only while a single one does: the
//     first members join the source. Once the Etcd joined, such a member waits for its own members.
type ownCluster struct {
	// recorded is Options.OwnClusterID, members Options.MemberEndpoints, joined
	// Options.JoinedExistingCluster.
	recorded uint64
	members  []string
	joined   bool
	// id is the cluster ID answers must carry, found from source (0: none known, nothing is accepted);
	// ambiguous is set when several cluster IDs answer where one is expected: no answer is accepted then.
	id        uint64
	source    ownSource
	ambiguous bool
}

// ownSource is where ownCluster found the Etcd's cluster ID.
type ownSource int

const (
	fromNothing ownSource = iota
	fromLeases
	fromMembers
	fromLocalData
	fromFirstJoin
)

// ownClusterOf resolves the cluster ID answers must carry for an Etcd that names a source (an Etcd without
// one never asks: its prober accepts every answer). local is the cluster ID of this member's valid data of
// this Etcd (0: none).
func ownClusterOf(answers map[string]status, o ownCluster, local uint64) ownCluster {
	if o.recorded != 0 {
		o.id, o.source = o.recorded, fromLeases
		return o
	}
	members := map[string]status{}
	for _, ep := range o.members {
		if st, ok := answers[ep]; ok {
			members[ep] = st
		}
	}
	if len(members) > 0 {
		o.id, o.ambiguous = singleClusterID(members)
		o.source = fromMembers
		return o
	}
	if local != 0 {
		o.id, o.source = local, fromLocalData
		return o
	}
	if o.joined {
		return o
	}
	o.id, o.ambiguous = singleClusterID(answers)
	if o.id != 0 || o.ambiguous {
		o.source = fromFirstJoin
	}
	return o
}

// singleClusterID is the one cluster ID all answers carry; ambiguous when they carry several (0 when
// there are none).
func singleClusterID(answers map[string]status) (id uint64, ambiguous bool) {
	ids := make([]uint64, 0, len(answers))
	for _, st := range answers {
		ids = append(ids, st.clusterID)
	}
	slices.Sort(ids)
	switch ids = slices.Compact(ids); len(ids) {
	case 0:
		return 0, false
	case 1:
		return ids[0], false
	}
	return 0, true
}

// accepts tells whether an answer with cluster ID id comes from the Etcd's own cluster.
func (o ownCluster) accepts(id uint64) bool { return !o.ambiguous && o.id != 0 && id == o.id }

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
	case o.ambiguous && o.source == fromMembers:
		return "unknown: its own members answer with different cluster IDs and its member leases record none"
	case o.ambiguous:
		return "unknown: none of its own members answers, its member leases record none, this member holds no data of it, and several clusters answer"
	case o.source == fromLeases:
		return fmt.Sprintf("%x (recorded in its member leases)", o.id)
	case o.source == fromMembers:
		return fmt.Sprintf("%x (its own members answer with it)", o.id)
	case o.source == fromLocalData:
		return fmt.Sprintf("%x (this member's data is of it; none of its own members answers and its member leases record none)", o.id)
	case o.source == fromFirstJoin:
		return fmt.Sprintf("%x (the only cluster answering, which a member without data joins)", o.id)
	case o.joined:
		return "not known: its member leases record none, none of its own members answers, this member holds no data of it, and the Etcd joined its source cluster before, so no cluster that answers is taken for it; waiting for its own members"
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
