package restorer

import (
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
)

// DefaultMissingLeaseTTL is the TTL of leases that keys refer to but no snapshot contains (see the
// package documentation): short, because an owner that is still alive keeps its lease alive anyway.
const DefaultMissingLeaseTTL = 60 * time.Second

// DefaultProgressInterval is how often progress is logged while deltas are applied.
const DefaultProgressInterval = 10 * time.Second

// Options describe the member to restore.
type Options struct {
	// Store holds the snapshots.
	Store snapstore.SnapStore
	// DataDir is the member's data directory; it must not exist or be empty.
	DataDir string
	// Name is the member name.
	Name string
	// InitialCluster is "name=peerURL,..." of the cluster the member starts in.
	InitialCluster string
	// InitialAdvertisePeerURLs are this member's peer URLs.
	InitialAdvertisePeerURLs []string
	// ClusterToken is the initial cluster token.
	ClusterToken string
	// MissingLeaseTTL is the TTL (seconds precision) of leases created for keys whose lease no
	// snapshot holds; 0 means DefaultMissingLeaseTTL.
	MissingLeaseTTL time.Duration
	// MaxDeltaSize bounds the decompressed size of one delta (deltas are streamed, not held in
	// memory; the bound refuses a foreign or runaway object); 0 means the snapshotformat default.
	MaxDeltaSize int64
	// ProgressInterval is how often progress is logged; 0 means DefaultProgressInterval.
	ProgressInterval time.Duration
	// TargetRevision, when set, restores the state at exactly this revision instead of the latest: the
	// newest full snapshot at or below it, then the deltas' events up to and including it (see
	// target.go). A revision the store cannot restore exactly is refused before anything is written.
	TargetRevision int64
	// TargetTime, when set, restores the newest revision the backups had recorded at this time: the
	// highest last revision of a snapshot (full or delta) whose creation time, as its name records it
	// to the second, is at or before it (see revisionAtTime). Exclusive with TargetRevision.
	TargetTime time.Time
	Log        logr.Logger
}

func (o *Options) validate() error {
	var errs []error
	if o.Store == nil {
		errs = append(errs, errors.New("no store"))
	}
	if o.DataDir == "" {
		errs = append(errs, errors.New("no data directory"))
	}
	if o.Name == "" {
		errs = append(errs, errors.New("no member name"))
	}
	if o.InitialCluster == "" || len(o.InitialAdvertisePeerURLs) == 0 {
		errs = append(errs, errors.New("initial cluster and advertised peer URLs are required"))
	}
	if o.MissingLeaseTTL == 0 {
		o.MissingLeaseTTL = DefaultMissingLeaseTTL
	}
	if o.MissingLeaseTTL < time.Second {
		errs = append(errs, fmt.Errorf("missing lease TTL %s is below 1s", o.MissingLeaseTTL))
	}
	if o.TargetRevision < 0 {
		errs = append(errs, fmt.Errorf("TargetRevision %d is negative", o.TargetRevision))
	}
	if o.TargetRevision != 0 && !o.TargetTime.IsZero() {
		errs = append(errs, errors.New("TargetRevision and TargetTime are exclusive: set one"))
	}
	if o.ProgressInterval <= 0 {
		o.ProgressInterval = DefaultProgressInterval
	}
	return errors.Join(errs...)
}

// Result describes a completed restore.
type Result struct {
	// Revision is the revision of the restored data: the target revision if one was set (or resolved
	// from the target time), else the last delta's last revision (or the full snapshot's).
	Revision int64
	// Full is the base snapshot; nil when the store held only deltas from revision 1.
	Full *snapshot.Snapshot
	// Deltas are the deltas applied, in order.
	Deltas []*snapshot.Snapshot
	// AppliedRevisions is how many revisions were replayed from deltas.
	AppliedRevisions int64
	// SkippedEvents were already covered (overlapping deltas of a leader change).
	SkippedEvents int64
	// MissingLeases were created for keys whose lease no snapshot holds.
	MissingLeases int
	// Duration is the whole restore.
	Duration time.Duration
}

// ErrNoSnapshots means the store holds nothing to restore.
var ErrNoSnapshots = errors.New("no snapshots in the store")

// ErrTargetNotInStore means the target revision or time is outside what the store holds: older than
// the oldest full snapshot kept or newer than the newest stored revision. (A target inside the stored
// range that no snapshot covers is a snapshot.ErrRevisionGap.)
var ErrTargetNotInStore = errors.New("target not in the store")
