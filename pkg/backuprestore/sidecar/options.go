package sidecar

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"time"

	"github.com/robfig/cron/v3"
	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/defrag"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/leader"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshotter"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/storeflags"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
	"github.com/gardener-etcd/gardener-etcd/pkg/ignoredflags"
	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
)

// Options are the flags of `etcdbrctl server` (named in pkg/podwire); druid passes them
// (statefulset.BackupRestoreArgs).
type Options struct {
	// Etcd access.
	DataDir           string
	Endpoints         []string
	ServiceEndpoints  []string
	InsecureTransport bool
	CACert            string
	Cert              string
	Key               string
	// InsecureSkipVerify accepts any server certificate of etcd (--insecure-skip-tls-verify, as in the
	// upstream sidecar); it matters only without --insecure-transport.
	InsecureSkipVerify bool

	// HTTP API.
	ServerPort int
	ServerCert string
	ServerKey  string
	// EnableProfiling serves Go's pprof endpoints under /debug/pprof/ on the HTTP API (--enable-profiling).
	EnableProfiling bool
	// ServerCACert verifies the other sidecars' HTTP API certificates when a follower forwards a snapshot
	// request to the backup leader (--server-cacert); the system roots when empty.
	ServerCACert string

	// Leases.
	EnableMemberLeaseRenewal   bool
	EnableSnapshotLeaseRenewal bool
	FullSnapshotLeaseName      string
	DeltaSnapshotLeaseName     string
	HeartbeatDuration          time.Duration

	// Store is where snapshots go and restores come from (--storage-provider, --store-*); an empty
	// Provider means the Etcd has no backup store: no snapshots, and a member without data starts empty.
	Store snapstore.Config
	// RestoreSource is another cluster's backups in the same store that a NEW cluster starts from
	// (initializer.Options.RestoreSource): --restore-source-store-prefix, up to --restore-source-revision or
	// --restore-source-time (neither: the latest). Druid renders them from the Etcd's restore annotations.
	RestoreSource RestoreSourceOptions
	// Compression of new snapshots (--compress-snapshots, --compression-policy); none if empty.
	Compression              snapshot.Compression
	Schedule                 string
	DeltaSnapshotPeriod      time.Duration
	DeltaSnapshotMemoryLimit int64
	GarbageCollectionPolicy  string
	MaxBackups               int
	GarbageCollectionPeriod  time.Duration
	// DeltaSnapshotRetentionPeriod keeps younger deltas through garbage collection
	// (--delta-snapshot-retention-period; see snapshotter.Config).
	DeltaSnapshotRetentionPeriod time.Duration
	// SnapshotTimeout bounds one full or delta snapshot requested over HTTP or taken after a
	// defragmentation (--etcd-snapshot-timeout).
	SnapshotTimeout time.Duration

	// Work of the backup leader besides snapshots.
	DefragmentationSchedule string
	DefragTimeout           time.Duration
	// DefragmentationCheckPeriod is how often the backup leader checks for a NOSPACE alarm (and recovers
	// from it) and for a member over a defragmentation threshold (0: never; the schedule only).
	DefragmentationCheckPeriod time.Duration
	// DefragmentationThresholds start a defragmentation at a check (see defrag.Thresholds; 0: off).
	FragmentationThreshold, QuotaThreshold float64
	// ReelectionPeriod is how often the sidecar asks its member whether it is the raft leader.
	ReelectionPeriod time.Duration
	// LeaderElectionTimeout bounds one of those requests (--etcd-connection-timeout-leader-election); 0
	// means the ReelectionPeriod.
	LeaderElectionTimeout time.Duration

	// SidecarURLOf maps the backup leader's client URL to the base URL of its sidecar, where a follower
	// forwards snapshot requests; nil means the same host with this sidecar's scheme and port, as in a
	// pod. Not a flag: tests run several sidecars on one host.
	SidecarURLOf func(clientURL string) (string, error)
	// Pod, Namespace and TemplatePath identify the member; empty means $POD_NAME, $POD_NAMESPACE and
	// memberconfig.TemplatePath(). Not flags: tests run several pods in one process.
	Pod, Namespace, TemplatePath string
	// Kubernetes renews the leases; nil means the pod's service account (or $KUBECONFIG). Not a flag.
	Kubernetes kubernetes.Interface

	// EtcdWrapperPort is where the etcd wrapper of this pod listens (--etcd-wrapper-port, the spelling of
	// the wrapper's own flag; druid passes spec.etcd.wrapperPort when it is not 9095): GET /phase before an
	// initialization, POST /stop to restart etcd. The host is the one of the first --endpoints, the pod-local
	// name of etcd.
	EtcdWrapperPort int

	// ignored are the upstream sidecar's flags that mean nothing here (see IgnoredFlags).
	ignored *ignoredflags.Set
}

// RestoreSourceOptions locate the restore source and its target.
type RestoreSourceOptions struct {
	// Prefix is the source's prefix in the own store's container; empty: no restore source.
	Prefix   string
	Revision int64
	// Time is RFC3339, as the flag takes it; parsed by Validate into time.
	Time string
	time time.Time
}

// IgnoredFlags are the flags of the upstream sidecar given on the command line that have no meaning for
// this one; the command logs them once at startup.
func (o *Options) IgnoredFlags() []ignoredflags.Flag { return o.ignored.Given() }

// DefaultOptions are the values used for flags druid does not pass.
func DefaultOptions() Options {
	return Options{
		DataDir:                    etcdpod.DataDir,
		Endpoints:                  []string{fmt.Sprintf("http://127.0.0.1:%d", etcdpod.DefaultClientPort)},
		InsecureTransport:          true,
		ServerPort:                 int(etcdpod.DefaultBackupPort),
		EtcdWrapperPort:            int(etcdpod.DefaultWrapperPort),
		HeartbeatDuration:          30 * time.Second,
		Schedule:                   "0 */1 * * *",
		DeltaSnapshotPeriod:        20 * time.Second,
		DeltaSnapshotMemoryLimit:   100 << 20,
		GarbageCollectionPolicy:    "Exponential",
		MaxBackups:                 7,
		GarbageCollectionPeriod:    time.Minute,
		SnapshotTimeout:            15 * time.Minute,
		DefragTimeout:              defrag.DefaultTimeout,
		DefragmentationCheckPeriod: defrag.DefaultCheckPeriod,
		FragmentationThreshold:     defrag.DefaultFragmentationThreshold,
		QuotaThreshold:             defrag.DefaultQuotaThreshold,
		ReelectionPeriod:           leader.DefaultReelectionPeriod,
	}
}

// AddFlags binds the options to flags. The store and compression flags are shared with the other etcdbrctl
// commands and reach o through the returned binding's complete, after parsing.
func (o *Options) AddFlags(fs *pflag.FlagSet) *boundFlags { //nolint:revive // the binding is opaque: callers only hand it back to this package
	fs.StringVar(&o.DataDir, podwire.FlagDataDir, o.DataDir, "etcd's data directory")
	fs.StringSliceVar(&o.Endpoints, podwire.FlagEndpoints, o.Endpoints, "client URL of the local etcd member")
	fs.StringSliceVar(&o.ServiceEndpoints, podwire.FlagServiceEndpoints, o.ServiceEndpoints, "client URL of the cluster's client service")
	fs.BoolVar(&o.InsecureTransport, podwire.FlagInsecureTransport, o.InsecureTransport, "talk to etcd without TLS")
	fs.StringVar(&o.CACert, podwire.FlagCACert, o.CACert, "CA bundle that verifies etcd's server certificate")
	fs.StringVar(&o.Cert, podwire.FlagCert, o.Cert, "client certificate for etcd")
	fs.StringVar(&o.Key, podwire.FlagKey, o.Key, "client key for etcd")
	fs.BoolVar(&o.InsecureSkipVerify, podwire.FlagInsecureSkipTLSVerify, o.InsecureSkipVerify, "accept any server certificate of etcd (with TLS only)")

	fs.IntVar(&o.ServerPort, podwire.FlagServerPort, o.ServerPort, "port of the HTTP API")
	fs.StringVar(&o.ServerCert, podwire.FlagServerCert, o.ServerCert, "certificate of the HTTP API (enables TLS)")
	fs.StringVar(&o.ServerKey, podwire.FlagServerKey, o.ServerKey, "key of the HTTP API")
	fs.BoolVar(&o.EnableProfiling, podwire.FlagEnableProfiling, o.EnableProfiling, "serve Go's pprof endpoints under /debug/pprof/ on the HTTP API")
	fs.StringVar(&o.ServerCACert, podwire.FlagServerCACert, o.ServerCACert, "CA bundle that verifies the backup leader's HTTP API certificate when forwarding to it")

	fs.BoolVar(&o.EnableMemberLeaseRenewal, podwire.FlagEnableMemberLeaseRenewal, o.EnableMemberLeaseRenewal, "renew the member lease (needs Kubernetes)")
	fs.BoolVar(&o.EnableSnapshotLeaseRenewal, podwire.FlagEnableSnapshotLeaseRenewal, o.EnableSnapshotLeaseRenewal, "renew the snapshot leases (needs Kubernetes)")
	fs.StringVar(&o.FullSnapshotLeaseName, podwire.FlagFullSnapshotLeaseName, o.FullSnapshotLeaseName, "lease of the last full snapshot")
	fs.StringVar(&o.DeltaSnapshotLeaseName, podwire.FlagDeltaSnapshotLeaseName, o.DeltaSnapshotLeaseName, "lease of the last delta snapshot")
	fs.DurationVar(&o.HeartbeatDuration, podwire.FlagK8sHeartbeatDuration, o.HeartbeatDuration, "member lease renewal period")

	fs.StringVar(&o.RestoreSource.Prefix, podwire.FlagRestoreSourceStorePrefix, o.RestoreSource.Prefix,
		"prefix of another cluster's backups in the same container that a new cluster restores from while its own prefix holds no backup (read only)")
	fs.Int64Var(&o.RestoreSource.Revision, podwire.FlagRestoreSourceRevision, o.RestoreSource.Revision, "revision that restore ends at, exactly (0: the latest)")
	fs.StringVar(&o.RestoreSource.Time, podwire.FlagRestoreSourceTime, o.RestoreSource.Time, "RFC3339 time: that restore ends at the newest snapshot taken at or before it")
	fs.StringVar(&o.Schedule, podwire.FlagSchedule, o.Schedule, "cron schedule of full snapshots")
	fs.DurationVar(&o.DeltaSnapshotPeriod, podwire.FlagDeltaSnapshotPeriod, o.DeltaSnapshotPeriod, "period of delta snapshots (0: none)")
	fs.Int64Var(&o.DeltaSnapshotMemoryLimit, podwire.FlagDeltaSnapshotMemoryLimit, o.DeltaSnapshotMemoryLimit, "bytes of events buffered before a delta snapshot is cut")
	fs.StringVar(&o.GarbageCollectionPolicy, podwire.FlagGarbageCollectionPolicy, o.GarbageCollectionPolicy, "Exponential or LimitBased")
	fs.IntVar(&o.MaxBackups, podwire.FlagMaxBackups, o.MaxBackups, "full snapshots kept by LimitBased garbage collection")
	fs.DurationVar(&o.GarbageCollectionPeriod, podwire.FlagGarbageCollectionPeriod, o.GarbageCollectionPeriod, "period of garbage collection (0: none)")
	fs.DurationVar(&o.DeltaSnapshotRetentionPeriod, podwire.FlagDeltaSnapshotRetentionPeriod, o.DeltaSnapshotRetentionPeriod,
		"keep deltas created within this period through garbage collection, besides those the policy keeps (0: only those)")
	fs.DurationVar(&o.SnapshotTimeout, podwire.FlagEtcdSnapshotTimeout, o.SnapshotTimeout, "timeout of one snapshot taken on request or after defragmentation")
	fs.DurationVar(&o.DefragTimeout, podwire.FlagEtcdDefragTimeout, o.DefragTimeout, "timeout of defragmenting one member")
	fs.DurationVar(&o.ReelectionPeriod, podwire.FlagReelectionPeriod, o.ReelectionPeriod, "how often the backup leader is determined again")
	fs.DurationVar(&o.LeaderElectionTimeout, podwire.FlagEtcdConnectionTimeoutLeaderElection, o.LeaderElectionTimeout,
		"timeout of one request to etcd that determines the backup leader (0: the reelection period)")
	fs.StringVar(&o.DefragmentationSchedule, podwire.FlagDefragmentationSchedule, o.DefragmentationSchedule, "cron schedule of defragmentation")
	// Not rendered by druid (the defaults fit every Etcd), hence spelled here.
	fs.DurationVar(&o.DefragmentationCheckPeriod, flagDefragmentationCheckPeriod, o.DefragmentationCheckPeriod,
		"how often the backup leader checks for a NOSPACE alarm (recovering from it) and for a member over a defragmentation threshold (0: never)")
	fs.Float64Var(&o.FragmentationThreshold, flagFragmentationThreshold, o.FragmentationThreshold,
		"defragment when this share of a member's database file is free pages, (dbSize - dbSizeInUse) / dbSize, and at least 32 MiB come back (0: off)")
	fs.Float64Var(&o.QuotaThreshold, flagQuotaThreshold, o.QuotaThreshold,
		"defragment when a member's database file exceeds this share of its quota, the data in use fits below it and at least 32 MiB come back (0: off)")

	fs.IntVar(&o.EtcdWrapperPort, podwire.FlagEtcdWrapperPort, o.EtcdWrapperPort, "port of the etcd wrapper on the host of --endpoints (GET /phase, POST /stop)")
	o.ignored = addIgnoredFlags(fs)
	return &boundFlags{store: storeflags.Bind(fs, &o.Store, "", ""), compression: storeflags.BindCompression(fs)}
}

// Flags of the defragmentation checks; druid does not render them.
const (
	flagDefragmentationCheckPeriod = "defragmentation-check-period"
	flagFragmentationThreshold     = "defragmentation-fragmentation-threshold"
	flagQuotaThreshold             = "defragmentation-quota-threshold"
)

// boundFlags are the flags shared with the other etcdbrctl commands (package storeflags); they resolve
// into Options only after parsing, because the store's credentials come from the environment.
type boundFlags struct {
	store       *storeflags.Store
	compression *storeflags.Compression
}

// complete writes the parsed shared flags into o.
func (b *boundFlags) complete(o *Options) error {
	c, err := b.compression.Compression()
	if err != nil {
		return err
	}
	o.Compression = c
	if !b.store.Configured() {
		o.Store = snapstore.Config{}
		return nil
	}
	o.Store, err = b.store.Config()
	return err
}

// snapshotterConfig is the snapshotter's configuration from the flags.
func (o *Options) snapshotterConfig() snapshotter.Config {
	return snapshotter.Config{
		Schedule:                 o.Schedule,
		DeltaSnapshotPeriod:      o.DeltaSnapshotPeriod,
		DeltaSnapshotMemoryLimit: o.DeltaSnapshotMemoryLimit,
		GarbageCollectionPolicy:  snapshotter.GCPolicy(o.GarbageCollectionPolicy),
		MaxBackups:               o.MaxBackups,
		GarbageCollectionPeriod:  o.GarbageCollectionPeriod,
		Compression:              o.Compression,

		DeltaSnapshotRetentionPeriod: o.DeltaSnapshotRetentionPeriod,
	}
}

// keepOptions configure the backup leader's defragmentation (defrag.Keep) from the flags.
func (o *Options) keepOptions() defrag.KeepOptions {
	return defrag.KeepOptions{
		Schedule:    o.DefragmentationSchedule,
		CheckPeriod: o.DefragmentationCheckPeriod,
		Thresholds: defrag.Thresholds{Fragmentation: o.FragmentationThreshold, MinReclaimable: defrag.DefaultMinReclaimable,
			Quota: o.QuotaThreshold},
	}
}

// localEndpoint is the local member's client endpoint, the first of --endpoints ("" without one, which
// Validate refuses).
func (o *Options) localEndpoint() string {
	if len(o.Endpoints) == 0 {
		return ""
	}
	return o.Endpoints[0]
}

// hasStore tells whether backups are configured.
func (o *Options) hasStore() bool { return o.Store.Provider != "" }

// Validate rejects inconsistent options before anything starts.
func (o *Options) Validate() error {
	var errs []error
	if len(o.Endpoints) == 0 {
		errs = append(errs, errors.New("--endpoints is required"))
	}
	for _, e := range o.Endpoints {
		if _, err := url.Parse(e); err != nil {
			errs = append(errs, fmt.Errorf("--endpoints: %w", err))
		}
	}
	if (o.ServerCert == "") != (o.ServerKey == "") {
		errs = append(errs, errors.New("--server-cert and --server-key go together"))
	}
	if (o.Cert == "") != (o.Key == "") {
		errs = append(errs, errors.New("--cert and --key go together"))
	}
	if o.HeartbeatDuration <= 0 {
		errs = append(errs, errors.New("--k8s-heartbeat-duration must be positive"))
	}
	if o.EnableSnapshotLeaseRenewal && (o.FullSnapshotLeaseName == "" || o.DeltaSnapshotLeaseName == "") {
		errs = append(errs, errors.New("--enable-snapshot-lease-renewal needs --full-snapshot-lease-name and --delta-snapshot-lease-name"))
	}
	if err := o.snapshotterConfig().Validate(); err != nil {
		errs = append(errs, fmt.Errorf("snapshot flags (--schedule, --delta-snapshot-*, --garbage-collection-*, --max-backups): %w", err))
	}
	if o.EtcdWrapperPort <= 0 || o.EtcdWrapperPort > 65535 {
		errs = append(errs, fmt.Errorf("--%s %d is no TCP port", podwire.FlagEtcdWrapperPort, o.EtcdWrapperPort))
	}
	if o.LeaderElectionTimeout < 0 {
		errs = append(errs, errors.New("--etcd-connection-timeout-leader-election must not be negative"))
	}
	if o.SnapshotTimeout <= 0 || o.DefragTimeout <= 0 || o.ReelectionPeriod <= 0 {
		errs = append(errs, errors.New("--etcd-snapshot-timeout, --etcd-defrag-timeout and --reelection-period must be positive"))
	}
	if o.DefragmentationCheckPeriod < 0 {
		errs = append(errs, fmt.Errorf("--%s must not be negative", flagDefragmentationCheckPeriod))
	}
	for _, share := range []struct {
		flag  string
		value float64
	}{{flagFragmentationThreshold, o.FragmentationThreshold}, {flagQuotaThreshold, o.QuotaThreshold}} {
		if share.value < 0 || share.value >= 1 {
			errs = append(errs, fmt.Errorf("--%s %v must be a share in [0, 1) (0: off)", share.flag, share.value))
		}
	}
	errs = append(errs, o.validateRestoreSource()...)
	if o.DefragmentationSchedule != "" {
		if _, err := cron.ParseStandard(o.DefragmentationSchedule); err != nil {
			errs = append(errs, fmt.Errorf("--defragmentation-schedule %q: %w", o.DefragmentationSchedule, err))
		}
	}
	return errors.Join(errs...)
}

// validateRestoreSource checks the restore source flags and parses the time.
func (o *Options) validateRestoreSource() []error {
	rs := &o.RestoreSource
	if rs.Prefix == "" {
		if rs.Revision != 0 || rs.Time != "" {
			return []error{fmt.Errorf("--%s and --%s need --%s", podwire.FlagRestoreSourceRevision, podwire.FlagRestoreSourceTime, podwire.FlagRestoreSourceStorePrefix)}
		}
		return nil
	}
	var errs []error
	if !o.hasStore() {
		errs = append(errs, fmt.Errorf("--%s needs a store (--storage-provider): the source is read from it and the restored cluster backs up into it", podwire.FlagRestoreSourceStorePrefix))
	}
	if druidv1alpha1.CleanStorePrefix(rs.Prefix) == druidv1alpha1.CleanStorePrefix(o.Store.Prefix) {
		errs = append(errs, fmt.Errorf("--%s %q is the own --store-prefix: the source must be another cluster's backups", podwire.FlagRestoreSourceStorePrefix, rs.Prefix))
	}
	if rs.Revision < 0 {
		errs = append(errs, fmt.Errorf("--%s %d must be positive", podwire.FlagRestoreSourceRevision, rs.Revision))
	}
	if rs.Revision != 0 && rs.Time != "" {
		errs = append(errs, fmt.Errorf("--%s and --%s are exclusive", podwire.FlagRestoreSourceRevision, podwire.FlagRestoreSourceTime))
	}
	if rs.Time != "" {
		t, err := time.Parse(time.RFC3339, rs.Time)
		if err != nil {
			errs = append(errs, fmt.Errorf("--%s %q is no RFC3339 time: %w", podwire.FlagRestoreSourceTime, rs.Time, err))
		}
		rs.time = t
	}
	return errs
}

// restoreSourceConfig is the source's store configuration: the own store's, with the source's prefix.
func (o *Options) restoreSourceConfig() snapstore.Config {
	cfg := o.Store
	cfg.Prefix = o.RestoreSource.Prefix
	return cfg
}

// wrapperURL is where the etcd wrapper listens: the pod-local host of the etcd endpoint, --etcd-wrapper-port.
func (o *Options) wrapperURL() (string, error) {
	u, err := url.Parse(o.Endpoints[0])
	if err != nil {
		return "", err
	}
	return "http://" + net.JoinHostPort(u.Hostname(), strconv.Itoa(o.EtcdWrapperPort)), nil
}
