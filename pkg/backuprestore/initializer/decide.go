package initializer

import "fmt"

// Case is a row of the initialization decision table (upstream etcd-druid's DEP-01, docs/design.md).
type Case int

// The eight cases of the table. Their actions are in actions.go.
const (
	// CaseUnknown is the zero value: nothing was decided yet.
	CaseUnknown Case = iota
	// CaseBootstrapFirst: first member of a fresh cluster; start new with all n peers.
	CaseBootstrapFirst
	// CaseBootstrapFollowing: a following member of a fresh cluster; start new with all n peers.
	CaseBootstrapFollowing
	// CaseRestartValid: an existing member of a quorate cluster with valid metadata and data; reuse.
	CaseRestartValid
	// CaseQuorateInvalidData: valid metadata, invalid data, quorate cluster; rejoin as a learner.
	CaseQuorateInvalidData
	// CaseQuorateInvalidMetadata: no valid metadata (or not this cluster's), quorate cluster; rejoin as a
	// learner.
	CaseQuorateInvalidMetadata
	// CaseNonQuorateValid: valid metadata and data, no quorum; reuse, the member is needed for quorum.
	CaseNonQuorateValid
	// CaseNonQuorateFirstRestore: first member, no valid data, nobody answers, no other member shows signs
	// of life, backups exist: restore full + deltas, take a new full snapshot, start as a one-member cluster.
	CaseNonQuorateFirstRestore
	// CaseNonQuorateFollowingWait: no valid data and no quorum, not allowed to restore alone: wait for a
	// quorate cluster, then join it as a learner.
	CaseNonQuorateFollowingWait
)

var caseNames = map[Case]string{
	CaseUnknown:                 "unknown",
	CaseBootstrapFirst:          "1 bootstrap first member",
	CaseBootstrapFollowing:      "2 bootstrap following member",
	CaseRestartValid:            "3 restart with valid data",
	CaseQuorateInvalidData:      "4 quorate, invalid data",
	CaseQuorateInvalidMetadata:  "5 quorate, invalid metadata",
	CaseNonQuorateValid:         "6 non-quorate, valid data",
	CaseNonQuorateFirstRestore:  "7 non-quorate, first member restores",
	CaseNonQuorateFollowingWait: "8 non-quorate, wait and join",
}

// String names the case with its number in the seed's table.
func (c Case) String() string {
	if s, ok := caseNames[c]; ok {
		return s
	}
	return fmt.Sprintf("case(%d)", int(c))
}

// Facts are everything the decision depends on, observed during one initialization.
type Facts struct {
	// ClusterSize is the number of members in the template's initial-cluster, the members of an
	// existing cluster the Etcd joins included.
	ClusterSize int
	// JoinsExisting is set when the template names an existing (source) cluster that the Etcd joins
	// instead of bootstrapping one (spec.etcd.bootstrapWithExistingCluster).
	JoinsExisting bool
	// Ordinal is this member's StatefulSet ordinal; 0 is the first member.
	Ordinal int
	Data    DataFacts
	Cluster ClusterFacts
	Backup  BackupFacts
}

// BackupFacts describe the store.
type BackupFacts struct {
	// Exists is set when the store holds at least one snapshot.
	Exists bool
	// LastRevision is the last revision the store holds.
	LastRevision int64
	// FromSource is set when the facts are the restore source's (Options.RestoreSource) because the own
	// store is empty: a restore then reads the source, up to its target.
	FromSource bool
}

// Decide maps facts to the case of the table. It is pure so that the table can be tested row by row;
// the comments name the facts each row needs.
func Decide(f Facts) Case {
	if f.ClusterSize <= 1 {
		return decideSingle(f)
	}
	d, c := f.Data, f.Cluster
	metadataOK := d.MetadataValid && d.OwnerOK
	if c.Quorate {
		if metadataOK && d.ClusterID == c.ClusterID && c.hasMemberID(d.MemberID) {
			if d.DataValid {
				return CaseRestartValid
			}
			return CaseQuorateInvalidData
		}
		// A bootstrap member the cluster knows from its initial-cluster but that never started is still
		// part of the fresh bootstrap: it starts new like its peers did.
		if c.Self != nil && !c.Self.Started && !c.Self.IsLearner && !d.HasMember {
			return CaseBootstrapFollowing
		}
		return CaseQuorateInvalidMetadata
	}
	if metadataOK && d.DataValid {
		return CaseNonQuorateValid
	}
	if f.JoinsExisting {
		// The data of an Etcd that joins an existing cluster is that cluster's: a member without valid
		// data neither bootstraps an empty cluster nor restores one of its own from the store (which would
		// split it from the source cluster), whatever the store holds; it waits for the cluster to answer
		// and joins it as a learner.
		return CaseNonQuorateFollowingWait
	}
	// No valid data and no quorum. Bootstrapping fresh is only right for a cluster that never held
	// data: nothing in the store, nothing on this disk, no answering member with writes, and no member
	// serving out of reach (a member that started new beside it would have forgotten its raft log).
	fresh := !f.Backup.Exists && !d.HasMember && c.MaxRevision <= 1 && len(c.LivePeers) == 0
	switch {
	case fresh && f.Ordinal == 0:
		return CaseBootstrapFirst
	case fresh:
		return CaseBootstrapFollowing
	case f.Ordinal == 0 && f.Backup.Exists && !c.Reachable && len(c.LivePeers) == 0:
		// Nobody answering is not proof that nobody serves: this member may be cut off from a cluster
		// that lives on (or still bootstraps, its first full snapshot already taken). Restoring a cluster
		// of its own then splits the cluster in two, and the writes to one of them are lost. So a member
		// restores alone only when no other member shows signs of life either.
		return CaseNonQuorateFirstRestore
	default:
		return CaseNonQuorateFollowingWait
	}
}

// decideSingle is the table for a one-member cluster: there is no peer to ask, so the store decides
// whether local data is good enough: data behind the latest backup is replaced by a restore.
func decideSingle(f Facts) Case {
	d := f.Data
	valid := d.MetadataValid && d.DataValid && d.OwnerOK
	if valid && (!f.Backup.Exists || d.Revision >= f.Backup.LastRevision) {
		return CaseRestartValid
	}
	if !f.Backup.Exists && !d.HasMember {
		return CaseBootstrapFirst
	}
	// Invalid or stale data: restore (or, without backups, start empty after moving the data aside —
	// a single member has nobody else to get data from).
	return CaseNonQuorateFirstRestore
}
