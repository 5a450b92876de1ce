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
	Log              logr.Logger
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
	if o.ProgressInterval <= 0 {
		o.ProgressInterval = DefaultProgressInterval
	}
	return errors.Join(errs...)
}

// Result describes a completed restore.
type Result struct {
	// Revision is the revision of the restored data: the last delta's last revision (or the full
	// snapshot's).
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
