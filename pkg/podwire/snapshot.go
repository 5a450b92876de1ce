package podwire

import "time"

// SnapshotKind tells whether a snapshot is a complete database (restorable on its own) or the events of
// a revision range that must be applied on top of an earlier snapshot. It is also the kind token of the
// snapshot's object name in the store.
type SnapshotKind string

const (
	// SnapshotFull is a complete etcd database as streamed by Maintenance.Snapshot.
	SnapshotFull SnapshotKind = "Full"
	// SnapshotIncr is a delta snapshot: the watch events of a contiguous revision range.
	SnapshotIncr SnapshotKind = "Incr"
)

// Snapshot is one backup as the sidecar answers GET /snapshot/full and GET /snapshot/delta (a delta
// with nothing new is `null`), with the field names of the upstream sidecar; druid records it in the
// Etcd's status. The sidecar's own snapshot type has this structure (and these field names), so what it
// stores and prints is this record too.
type Snapshot struct {
	// Kind is Full or Incr.
	Kind SnapshotKind `json:"kind"`
	// StartRevision is the first revision a delta covers; 0 for a full snapshot.
	StartRevision int64 `json:"startRevision"`
	// LastRevision is the newest revision contained: the database revision of a full snapshot, the
	// revision of the last event of a delta.
	LastRevision int64 `json:"lastRevision"`
	// CreatedOn is when the snapshot was taken, with second precision as in the name.
	CreatedOn time.Time `json:"createdOn"`
	// SnapDir is the legacy v1 directory ("Backup-<unix>") holding the snapshot; empty in v2.
	SnapDir string `json:"snapDir"`
	// SnapName is the object's base name, e.g. "Full-00000000-00000042-1700000000.gz".
	SnapName string `json:"snapName"`
	// Prefix is the store prefix the snapshot was listed under (informational; stores use their own).
	Prefix string `json:"prefix"`
	// CompressionSuffix is ".gz", ".Z", ".zlib" or empty; it selects the codec of the contents.
	CompressionSuffix string `json:"compressionSuffix"`
	// IsFinal marks the last full snapshot of a cluster that was shut down on purpose.
	IsFinal bool `json:"isFinal"`
}
