package initializer

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/httpapi"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/memberconfig"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcddata"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
)

// Defaults of Options.
const (
	DefaultProbeTimeout = 5 * time.Second
	DefaultQuorumWait   = 3 * time.Minute
	DefaultPollInterval = 2 * time.Second
)

// Options describe the member and its surroundings.
type Options struct {
	// Member is this member's identity (name, peer and client URLs) as memberconfig resolved it.
	Member memberconfig.Member
	// InitialCluster is the template's initial-cluster: every replica; its length is the cluster size.
	InitialCluster memberconfig.InitialCluster
	// ExistingCluster are the members of an existing (source) cluster the Etcd joins instead of
	// bootstrapping one (memberconfig.Template.ExistingCluster); empty otherwise. While it is set, a member
	// never starts a cluster of its own (Facts.JoinsExisting): it reuses its valid data or joins.
	ExistingCluster memberconfig.InitialCluster
	// OwnClusterID is the etcd cluster ID recorded for this Etcd (its member leases, which the sidecars
	// renew with the ID their etcd answers), 0 while none is recorded. It only matters with
	// ExistingCluster: the source's client endpoints stay among ClusterEndpoints for as long as the source
	// is named, and once the source is decommissioned they may serve another cluster. An endpoint answering
	// with another cluster ID than the Etcd's is then neither asked about the cluster nor joined
	// (ClusterFacts.Foreign): the member joins its own cluster or waits. While none is recorded, the Etcd's
	// cluster is the one MemberEndpoints answer with (ownCluster). Other Etcds ask their own members only,
	// and their cluster ID legitimately changes with a restore (case 7).
	OwnClusterID uint64
	// JoinedExistingCluster is set once the Etcd's members joined ExistingCluster (druid's mark on the
	// member leases, after status.bootstrapWithExistingCluster was written): a cluster that answers is then
	// no longer the Etcd's just because it is the only one answering, which only the first join may assume.
	// A member without data that nothing else tells its Etcd's cluster (OwnClusterID, MemberEndpoints, its
	// data) waits for its own members (ownCluster).
	JoinedExistingCluster bool
	// MemberEndpoints are the client URLs of the Etcd's own members among ClusterEndpoints (the template's):
	// whatever answers there is the Etcd's cluster.
	MemberEndpoints []string
	// DataDir is etcd's data directory.
	DataDir string
	// ClusterToken is etcd's initial-cluster-token (used when a restore builds a member).
	ClusterToken string
	// Owner ("namespace/etcd") is written to a marker in the data directory; data marked for another
	// owner is never used. Empty disables the safe-guard.
	Owner string
	// ClusterEndpoints are client URLs that reach the other members (their client URLs or the client
	// service); this member's own client URLs are ignored.
	ClusterEndpoints []string
	// ServiceEndpoints are the client Service's URLs (also among ClusterEndpoints). They are asked first: a
	// member that a Ready member with a leader answers through them asks no member by name (see
	// prober.probeThroughService). Empty: every endpoint is asked at once.
	ServiceEndpoints []string
	// ClientTLS is the client TLS configuration for ClusterEndpoints (nil: plain).
	ClientTLS *tls.Config
	// Store holds the backups; nil means backups are not configured.
	Store snapstore.SnapStore
	// RestoreSource, when set, is another cluster's backups that a NEW cluster starts from: while Store
	// holds no backup and this member's data directory holds no member, the facts read the source as the
	// store, so that the first member restores from it (case 7, up to the source's target) and takes the
	// first full snapshot into Store, and the others join it. Once Store holds a backup the source is never
	// read again. It is only listed and read (wrap it with snapstore.ReadOnly).
	RestoreSource *RestoreSource
	// TakeFullSnapshot uploads a full snapshot of the etcd behind cli after a case-7 restore; nil takes
	// none (the backup leader's snapshotter then continues from the restored revision).
	TakeFullSnapshot func(ctx context.Context, cli *clientv3.Client) error
	// ProbeTimeout bounds each request to another member; 0 means DefaultProbeTimeout.
	ProbeTimeout time.Duration
	// QuorumWait is how long case 8 waits for a quorate cluster before failing (the wrapper retries);
	// 0 means DefaultQuorumWait.
	QuorumWait time.Duration
	// PollInterval is how often case 8 asks again; 0 means DefaultPollInterval.
	PollInterval time.Duration
	// LivePeers returns the other members (by name) with evidence of a serving etcd, e.g. recently
	// renewed member leases (heartbeat.PeerLiveness); asked only when nobody answers and this member would
	// start etcd on its own (a fresh bootstrap, or a restore as a cluster of its own), which any of them
	// forbids. nil: no evidence source (a member restores whenever nobody
	// answers). An error fails the initialization: the wrapper retries it.
	LivePeers func(ctx context.Context, others []string) ([]string, error)
	// BeforeChange is asked after the decision and before every action other than reusing valid data as
	// it is (cases 3 and 6, and a passed sanity check): a bootstrap, a rejoin as a learner, a restore or
	// the wait to join. An error refuses the initialization before anything is changed. It carries checks
	// that only matter when the member would get a new identity or new data (e.g. the sidecar's
	// left-cluster mark), so that a member with valid data restarts without them. nil: no check.
	BeforeChange func(ctx context.Context, c Case) error
	// Metrics record validations, restores and learner additions; nil records nothing.
	Metrics *Metrics
	Log     logr.Logger
}

// RestoreSource is where a new cluster restores from, and up to which point.
type RestoreSource struct {
	Store snapstore.SnapStore
	// TargetRevision and TargetTime are restorer.Options' (exclusive; neither: the latest state).
	TargetRevision int64
	TargetTime     time.Time
}

// State is what the last successful initialization tells the configuration endpoint: how etcd must
// start. memberconfig.Resolve(template, pod, State().JoinMembers) renders it.
type State struct {
	// Case is the decision taken.
	Case Case
	// ClusterState is memberconfig.ClusterStateNew or ClusterStateExisting.
	ClusterState string
	// JoinMembers are the cluster's members (self included, possibly unnamed) when the member joins a
	// running cluster as a learner; nil otherwise.
	JoinMembers []memberconfig.ClusterMember
}

// StateProvider is implemented by Initializer for the /config handler.
type StateProvider interface {
	State() State
}

// Initializer runs the decision table; it implements httpapi.Initializer.
type Initializer struct {
	opts   Options
	log    logr.Logger
	prober prober

	mu    sync.Mutex
	state State
}

var _ httpapi.Initializer = (*Initializer)(nil)

// New validates the options.
func New(opts Options) (*Initializer, error) {
	if opts.Member.Name == "" || len(opts.Member.PeerURLs) == 0 {
		return nil, errors.New("initializer: member name and peer URLs are required")
	}
	if opts.DataDir == "" {
		return nil, errors.New("initializer: data dir is required")
	}
	if !slices.ContainsFunc(opts.InitialCluster, func(m memberconfig.ClusterMember) bool { return m.Name == opts.Member.Name }) {
		return nil, fmt.Errorf("initializer: member %s is not in initial-cluster %s", opts.Member.Name, opts.InitialCluster)
	}
	opts.ProbeTimeout = cmp(opts.ProbeTimeout, DefaultProbeTimeout)
	opts.QuorumWait = cmp(opts.QuorumWait, DefaultQuorumWait)
	opts.PollInterval = cmp(opts.PollInterval, DefaultPollInterval)
	var others []string
	for _, ep := range opts.ClusterEndpoints {
		if !slices.Contains(opts.Member.ClientURLs, ep) {
			others = append(others, ep)
		}
	}
	return &Initializer{
		opts: opts, log: opts.Log.WithName("initializer").WithValues("member", opts.Member.Name),
		prober: prober{endpoints: others, service: opts.ServiceEndpoints, tls: opts.ClientTLS, timeout: opts.ProbeTimeout,
			own: ownClusterOptions(opts)},
	}, nil
}

// ownClusterOptions tell the Etcd's own cluster for an Etcd that names an existing cluster; nil otherwise.
func ownClusterOptions(opts Options) *ownCluster {
	if len(opts.ExistingCluster) == 0 {
		return nil
	}
	return &ownCluster{recorded: opts.OwnClusterID, members: opts.MemberEndpoints, joined: opts.JoinedExistingCluster}
}

func cmp(v, def time.Duration) time.Duration {
	if v <= 0 {
		return def
	}
	return v
}

// State returns the outcome of the last successful Initialize.
func (i *Initializer) State() State {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.state
}

// Initialize implements httpapi.Initializer: observe, decide, act.
func (i *Initializer) Initialize(ctx context.Context, mode podwire.InitMode) error {
	start := time.Now()
	data, sanityPassed, err := i.validateDataDir(mode)
	if err != nil {
		return err
	}
	if sanityPassed {
		i.log.Info("Sanity check passed, reusing the data directory")
		i.setState(State{Case: CaseRestartValid, ClusterState: memberconfig.ClusterStateNew})
		return nil
	}
	facts, err := i.observe(ctx, data)
	if err != nil {
		return err
	}
	if len(facts.Cluster.Foreign) > 0 {
		i.log.Info("Not asking or joining the cluster at these endpoints: its cluster ID is not this Etcd's",
			"foreign", facts.Cluster.Foreign.String(), "ownCluster", facts.Cluster.OwnCluster.String())
	}
	c := Decide(facts)
	i.log.Info("Initialization decided", "case", c.String(), "clusterSize", facts.ClusterSize,
		"ordinal", facts.Ordinal, "reachable", facts.Cluster.Reachable, "quorate", facts.Cluster.Quorate,
		"metadataValid", facts.Data.MetadataValid, "dataValid", facts.Data.DataValid, "ownerOK", facts.Data.OwnerOK,
		"dataProblem", facts.Data.Problem, "backup", facts.Backup.Exists, "revision", facts.Data.Revision,
		"backupRevision", facts.Backup.LastRevision, "livePeers", facts.Cluster.LivePeers)
	st, err := i.act(ctx, c, facts)
	if err != nil {
		return fmt.Errorf("initialization (%s): %w", c, err)
	}
	i.setState(st)
	i.log.Info("Initialization done", "case", st.Case.String(), "clusterState", st.ClusterState, "took", time.Since(start))
	return nil
}

func (i *Initializer) setState(s State) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.state = s
}

// Observe gathers the facts of a full initialization.
func (i *Initializer) Observe(ctx context.Context) (Facts, error) {
	return i.observe(ctx, InspectDataDir(i.opts.DataDir, i.opts.Owner, true))
}

// observe gathers the facts of a full initialization around the data directory's facts.
func (i *Initializer) observe(ctx context.Context, data DataFacts) (Facts, error) {
	f := Facts{ClusterSize: len(i.opts.InitialCluster) + len(i.opts.ExistingCluster), JoinsExisting: len(i.opts.ExistingCluster) > 0,
		Ordinal: Ordinal(i.opts.Member.Name), Data: data}
	if f.ClusterSize > 1 {
		f.Cluster = i.prober.probe(ctx, i.opts.Member, data)
	}
	b, err := i.backupFacts(ctx)
	if err != nil {
		return f, err
	}
	switch {
	case !b.Exists && i.opts.RestoreSource != nil:
		if b, err = i.sourceFacts(ctx, data); err != nil {
			return f, err
		}
	case b.Exists && i.opts.RestoreSource != nil && !data.HasMember:
		// Expected for every member but the first of a restored cluster; for the first member of a NEW
		// Etcd it means its own prefix was taken (an earlier attempt, another cluster's prefix).
		i.log.Info("Not restoring from the restore source: the own backup prefix already holds backups, which this member follows",
			"lastRevision", b.LastRevision)
	}
	f.Backup = b
	if f.ClusterSize > 1 && !f.Cluster.Reachable && startsAlone(Decide(f)) && i.opts.LivePeers != nil {
		live, err := i.opts.LivePeers(ctx, i.otherMembers())
		if err != nil {
			return f, fmt.Errorf("nobody answers, but whether the other members live is unknown, so this member does not start a cluster on its own: %w", err)
		}
		f.Cluster.LivePeers = live
	}
	if f.ClusterSize <= 1 && f.Data.DataValid && f.Data.WALAhead && b.Exists && f.Data.Revision < b.LastRevision {
		// The single-member decision compares revisions; the database alone would understate what this
		// member holds after a crash.
		rev, err := replayedRevision(ctx, i.opts.DataDir, i.opts.Member, i.opts.ClusterToken)
		switch {
		case errors.Is(err, etcddata.ErrDataVersion):
			// An older etcd wrote it: this etcd cannot replay it here, the wrapper steps it. Its WAL is this
			// member's own log, from which everything the backups hold was applied, so it is reused.
			i.log.Info("The database lags its WAL, which an older etcd wrote: reusing the data, whose WAL holds what the backups hold",
				"databaseRevision", f.Data.Revision, "backupRevision", b.LastRevision)
			f.Data.Revision = b.LastRevision
		case err != nil:
			return f, fmt.Errorf("the database lags its WAL and the revision etcd would serve is unknown, so the data is neither reused nor restored over: %w", err)
		default:
			i.log.Info("Replayed the WAL on a copy of the data: the database lagged it", "databaseRevision", f.Data.Revision, "revision", rev)
			f.Data.Revision = rev
		}
	}
	return f, nil
}

// startsAlone tells the cases in which a member starts etcd without any other member having answered: a
// fresh bootstrap, or a restore as a cluster of its own. Both are wrong beside a member that serves out of
// reach (ClusterFacts.LivePeers).
func startsAlone(c Case) bool {
	return c == CaseBootstrapFirst || c == CaseBootstrapFollowing || c == CaseNonQuorateFirstRestore
}

// otherMembers are the names of the other members of the initial cluster.
func (i *Initializer) otherMembers() []string {
	var names []string
	for _, m := range i.opts.InitialCluster {
		if m.Name != i.opts.Member.Name {
			names = append(names, m.Name)
		}
	}
	return names
}

func (i *Initializer) backupFacts(ctx context.Context) (BackupFacts, error) {
	if i.opts.Store == nil {
		return BackupFacts{}, nil
	}
	snaps, err := i.opts.Store.List(ctx)
	if err != nil {
		// Deciding without knowing the backups could bootstrap an empty cluster over existing backups.
		return BackupFacts{}, fmt.Errorf("listing backups: %w", err)
	}
	if len(snaps) == 0 {
		return BackupFacts{}, nil
	}
	return BackupFacts{Exists: true, LastRevision: snaps[len(snaps)-1].LastRevision}, nil
}

// sourceFacts are the facts of the restore source, read in place of the empty own store while this member
// holds no data: a new cluster then decides as if its backups were the source's, so that only the first
// member restores (the others wait and join it) and nobody bootstraps an empty cluster over a restore that
// is due. A member with data of its own never falls back to the source: its cluster ran before, and the
// source is not its history. A source without backups fails the initialization rather than starting
// empty, which would silently lose the state the restore was asked for.
func (i *Initializer) sourceFacts(ctx context.Context, data DataFacts) (BackupFacts, error) {
	if data.HasMember {
		i.log.Info("Not restoring from the restore source: the data directory holds a member, so this cluster ran before")
		return BackupFacts{}, nil
	}
	snaps, err := i.opts.RestoreSource.Store.List(ctx)
	if err != nil {
		return BackupFacts{}, fmt.Errorf("listing the restore source's backups: %w", err)
	}
	if len(snaps) == 0 {
		return BackupFacts{}, errors.New("the restore source holds no backups: nothing to restore the new cluster from")
	}
	last := snaps[len(snaps)-1].LastRevision
	if t := i.opts.RestoreSource.TargetRevision; t > 0 {
		last = min(last, t)
	}
	return BackupFacts{Exists: true, LastRevision: last, FromSource: true}, nil
}

// Ordinal is the StatefulSet ordinal of a member name (<etcd>-<i> or <prefix>-<etcd>-<i>), or -1 when the
// name has none; etcdpod.TrailingOrdinal parses it.
func Ordinal(name string) int {
	if n, ok := etcdpod.TrailingOrdinal(name); ok {
		return n
	}
	return -1
}
