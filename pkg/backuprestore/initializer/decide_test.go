package initializer

import "testing"

// TestDecideTable checks every row of the initialization decision table plus the safety rows around it.
func TestDecideTable(t *testing.T) {
	const cid, mid = 0xc1, 0xa1
	valid := DataFacts{HasMember: true, MetadataValid: true, DataValid: true, OwnerOK: true, MemberID: mid, ClusterID: cid, Revision: 50}
	badData := valid
	badData.DataValid = false
	noData := DataFacts{OwnerOK: true}
	quorate := ClusterFacts{Reachable: true, Quorate: true, ClusterID: cid, MaxRevision: 60, Members: []Member{{ID: mid, Name: "etcd-main-1", Started: true}, {ID: 2, Started: true}}}
	foreign := quorate
	foreign.ClusterID = 0xc2
	downWithData := ClusterFacts{Reachable: true, MaxRevision: 60}
	freshPeer := ClusterFacts{Reachable: true, MaxRevision: 1}
	backups := BackupFacts{Exists: true, LastRevision: 55}
	unstartedSelf := Member{ID: 3, PeerURLs: []string{"http://p2"}}
	bootstrapping := ClusterFacts{Reachable: true, Quorate: true, ClusterID: cid, MaxRevision: 1, Members: []Member{{ID: 1, Started: true}, unstartedSelf}, Self: &unstartedSelf}
	otherOwner := valid
	otherOwner.OwnerOK = false

	for _, tc := range []struct {
		name string
		f    Facts
		want Case
	}{
		{"1 fresh first", Facts{ClusterSize: 3, Ordinal: 0, Data: noData}, CaseBootstrapFirst},
		{"1 fresh first, peer bootstrapping", Facts{ClusterSize: 3, Ordinal: 0, Data: noData, Cluster: freshPeer}, CaseBootstrapFirst},
		{"2 fresh following", Facts{ClusterSize: 3, Ordinal: 2, Data: noData, Cluster: freshPeer}, CaseBootstrapFollowing},
		{"2 bootstrap member never started, others quorate", Facts{ClusterSize: 3, Ordinal: 2, Data: noData, Cluster: bootstrapping}, CaseBootstrapFollowing},
		{"3 restart valid", Facts{ClusterSize: 3, Ordinal: 1, Data: valid, Cluster: quorate}, CaseRestartValid},
		{"4 valid metadata, bad data", Facts{ClusterSize: 3, Ordinal: 1, Data: badData, Cluster: quorate}, CaseQuorateInvalidData},
		{"5 no data", Facts{ClusterSize: 3, Ordinal: 1, Data: noData, Cluster: quorate}, CaseQuorateInvalidMetadata},
		{"5 data of another cluster", Facts{ClusterSize: 3, Ordinal: 1, Data: valid, Cluster: foreign}, CaseQuorateInvalidMetadata},
		{"5 data of another owner", Facts{ClusterSize: 3, Ordinal: 1, Data: otherOwner, Cluster: quorate}, CaseQuorateInvalidMetadata},
		{"5 scale-up member", Facts{ClusterSize: 3, Ordinal: 2, Data: noData, Cluster: quorate, Backup: backups}, CaseQuorateInvalidMetadata},
		{"6 non-quorate valid", Facts{ClusterSize: 3, Ordinal: 1, Data: valid, Cluster: downWithData}, CaseNonQuorateValid},
		{"6 nobody answers, valid", Facts{ClusterSize: 3, Ordinal: 0, Data: valid, Backup: backups}, CaseNonQuorateValid},
		{"7 first, nobody answers, backups", Facts{ClusterSize: 3, Ordinal: 0, Data: noData, Backup: backups}, CaseNonQuorateFirstRestore},
		{"7 first, bad data, backups", Facts{ClusterSize: 3, Ordinal: 0, Data: badData, Backup: backups}, CaseNonQuorateFirstRestore},
		{"8 following, backups", Facts{ClusterSize: 3, Ordinal: 1, Data: noData, Backup: backups}, CaseNonQuorateFollowingWait},
		{"8 first, but a non-quorate peer answers", Facts{ClusterSize: 3, Ordinal: 0, Data: noData, Cluster: downWithData, Backup: backups}, CaseNonQuorateFollowingWait},
		{"never bootstrap empty next to a peer with data", Facts{ClusterSize: 3, Ordinal: 0, Data: noData, Cluster: downWithData}, CaseNonQuorateFollowingWait},
		{"never bootstrap over invalid data", Facts{ClusterSize: 3, Ordinal: 0, Data: badData}, CaseNonQuorateFollowingWait},
		{"single: valid", Facts{ClusterSize: 1, Ordinal: 0, Data: valid}, CaseRestartValid},
		{"single: valid, ahead of backup", Facts{ClusterSize: 1, Ordinal: 0, Data: valid, Backup: BackupFacts{Exists: true, LastRevision: 50}}, CaseRestartValid},
		{"single: behind backup", Facts{ClusterSize: 1, Ordinal: 0, Data: valid, Backup: backups}, CaseNonQuorateFirstRestore},
		{"single: fresh", Facts{ClusterSize: 1, Ordinal: 0, Data: noData}, CaseBootstrapFirst},
		{"single: no data, backups", Facts{ClusterSize: 1, Ordinal: 0, Data: noData, Backup: backups}, CaseNonQuorateFirstRestore},
		{"single: bad data, no backups", Facts{ClusterSize: 1, Ordinal: 0, Data: badData}, CaseNonQuorateFirstRestore},
		// Joining an existing cluster (one member of our own, one of the source: ClusterSize 2).
		{"join: source answers, no data", Facts{ClusterSize: 2, JoinsExisting: true, Ordinal: 0, Data: noData, Cluster: quorate}, CaseQuorateInvalidMetadata},
		{"join: source answers, data of another cluster", Facts{ClusterSize: 2, JoinsExisting: true, Ordinal: 0, Data: valid, Cluster: foreign}, CaseQuorateInvalidMetadata},
		{"join: joined before, restart", Facts{ClusterSize: 2, JoinsExisting: true, Ordinal: 0, Data: valid, Cluster: quorate}, CaseRestartValid},
		{"join: nobody answers, no data: never bootstrap", Facts{ClusterSize: 2, JoinsExisting: true, Ordinal: 0, Data: noData}, CaseNonQuorateFollowingWait},
		{"join: nobody answers, backups: never restore alone", Facts{ClusterSize: 2, JoinsExisting: true, Ordinal: 0, Data: noData, Backup: backups}, CaseNonQuorateFollowingWait},
		{"join: nobody answers, valid data: reuse", Facts{ClusterSize: 2, JoinsExisting: true, Ordinal: 0, Data: valid, Backup: backups}, CaseNonQuorateValid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Decide(tc.f); got != tc.want {
				t.Fatalf("Decide = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestOrdinal(t *testing.T) {
	for name, want := range map[string]int{"etcd-main-0": 0, "shoot--a--b-etcd-events-12": 12, "etcd": -1, "etcd-x": -1, "m0": -1} {
		if got := Ordinal(name); got != want {
			t.Errorf("Ordinal(%q) = %d, want %d", name, got, want)
		}
	}
}

// TestDecideNeverRestoresAloneBesideALivePeer: the first member, cut off from the others (nobody answers),
// restores a cluster of its own only when no other member shows signs of life; otherwise it waits to join.
func TestDecideNeverRestoresAloneBesideALivePeer(t *testing.T) {
	cutOff := Facts{ClusterSize: 3, Ordinal: 0, Data: DataFacts{OwnerOK: true}, Backup: BackupFacts{Exists: true, LastRevision: 9}}
	if got := Decide(cutOff); got != CaseNonQuorateFirstRestore {
		t.Fatalf("no live peer: Decide = %s, want %s", got, CaseNonQuorateFirstRestore)
	}
	cutOff.Cluster.LivePeers = []string{"etcd-main-2"}
	if got := Decide(cutOff); got != CaseNonQuorateFollowingWait {
		t.Fatalf("a live peer: Decide = %s, want %s", got, CaseNonQuorateFollowingWait)
	}
}

// TestDecideNeverBootstrapsFreshBesideALivePeer: with no backups and nothing on its disk, a member nobody
// answers starts new only when no other member shows signs of life; beside a serving member it would rejoin
// under its old identity with an empty raft log.
func TestDecideNeverBootstrapsFreshBesideALivePeer(t *testing.T) {
	for ordinal, fresh := range []Case{CaseBootstrapFirst, CaseBootstrapFollowing} {
		f := Facts{ClusterSize: 3, Ordinal: ordinal, Data: DataFacts{OwnerOK: true}}
		if got := Decide(f); got != fresh {
			t.Fatalf("ordinal %d, no live peer: Decide = %s, want %s", ordinal, got, fresh)
		}
		f.Cluster.LivePeers = []string{"etcd-main-2"}
		if got := Decide(f); got != CaseNonQuorateFollowingWait {
			t.Fatalf("ordinal %d, a live peer: Decide = %s, want %s", ordinal, got, CaseNonQuorateFollowingWait)
		}
	}
}
