package initializer

import (
	"slices"
	"testing"
)

// The cluster an Etcd that names an existing cluster accepts answers from, for each thing that can tell
// it: what its leases record, what its own members answer, the cluster of this member's valid data and,
// for a member without any of these (the first join), the single cluster that answers.
func TestOwnClusterAcceptsOnlyTheEtcdsCluster(t *testing.T) {
	const (
		own, source, foreign, other = 0xa1, 0xb2, 0xc3, 0xd4
		member0, member1, sourceEP  = "https://etcd-new-0:2379", "https://etcd-new-1:2379", "https://etcd-old-0:2379"
		otherEP                     = "https://etcd-other-0:2379"
	)
	members := []string{member0, member1}
	for _, tc := range []struct {
		name      string
		recorded  uint64
		local     uint64
		joined    bool
		answers   map[string]status
		accepted  []string
		ambiguous bool
	}{{
		name: "the leases record the cluster", recorded: own, local: foreign,
		answers:  map[string]status{member0: {clusterID: own}, sourceEP: {clusterID: foreign}},
		accepted: []string{member0},
	}, {
		name: "nothing recorded, own members answer", local: foreign,
		answers:  map[string]status{member0: {clusterID: own}, sourceEP: {clusterID: foreign}},
		accepted: []string{member0},
	}, {
		name:      "nothing recorded, own members answer with different clusters",
		answers:   map[string]status{member0: {clusterID: own}, member1: {clusterID: other}, sourceEP: {clusterID: own}},
		ambiguous: true,
	}, {
		// A member with valid data whose own members are all down (e.g. a woken-up hibernated Etcd, whose
		// leases are new and empty) must not take the cluster at the source's endpoint for its own.
		name: "nothing recorded, no own member answers, valid data of the Etcd's cluster", local: own,
		answers: map[string]status{sourceEP: {clusterID: foreign}},
	}, {
		name: "nothing recorded, no own member answers, valid data of the source cluster", local: source,
		answers:  map[string]status{sourceEP: {clusterID: source}},
		accepted: []string{sourceEP},
	}, {
		name:     "first join: the only cluster that answers",
		answers:  map[string]status{sourceEP: {clusterID: source}},
		accepted: []string{sourceEP},
	}, {
		// A client balancing over endpoints of two clusters could remove from one and add to another.
		name:      "first join: several clusters answer",
		answers:   map[string]status{sourceEP: {clusterID: source}, otherEP: {clusterID: foreign}},
		ambiguous: true,
	}, {
		// Nothing tells a member without data of an Etcd that joined before (e.g. woken up from hibernation)
		// its cluster: the one at the source's endpoint may be another by now.
		name: "the Etcd joined before: the only cluster answering", joined: true,
		answers: map[string]status{sourceEP: {clusterID: foreign}},
	}, {
		name: "the Etcd joined before: own members answer", joined: true,
		answers:  map[string]status{member0: {clusterID: own}, sourceEP: {clusterID: foreign}},
		accepted: []string{member0},
	}, {
		name: "nobody answers",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			o := ownClusterOf(tc.answers, ownCluster{recorded: tc.recorded, members: members, joined: tc.joined}, tc.local)
			accepted, foreign := o.split(tc.answers)
			if !slices.Equal(accepted, tc.accepted) || o.ambiguous != tc.ambiguous {
				t.Fatalf("accepted %v (ambiguous %v), want %v (ambiguous %v); own cluster %s", accepted, o.ambiguous, tc.accepted, tc.ambiguous, o)
			}
			if len(accepted)+len(foreign) != len(tc.answers) {
				t.Fatalf("accepted %v and foreign %v do not cover the answers %v", accepted, foreign, tc.answers)
			}
		})
	}
}
