package app

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client/config"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/compactor"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshotlease"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshotter"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/storeflags"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
	"github.com/gardener-etcd/gardener-etcd/pkg/ignoredflags"
	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
)

// compactOptions are the flags of `etcdbrctl compact`, as druid's compaction Job passes them
// (pkg/druid/controller/compaction.CompactArgs).
type compactOptions struct {
	store           snapstore.Config
	storeFlags      *storeflags.Store
	dataDir         string
	renewLeases     bool
	fullLease       string
	deltaLease      string
	snapTimeout     time.Duration
	defragTimeout   time.Duration
	quotaBytes      int64
	namespaceEnvVar string
	// ignored are the upstream compaction Job's flags that mean nothing here.
	ignored *ignoredflags.Set
}

func newCompactCommand() (*cobra.Command, *compactOptions) {
	o := &compactOptions{namespaceEnvVar: etcdpod.EnvPodNamespace}
	cmd := &cobra.Command{
		Use:   "compact",
		Short: "Replace the latest full snapshot and its deltas by one new full snapshot at the same revision",
		Long: "Restores the latest snap stream into --data-dir, starts a private etcd on it on loopback, compacts at the\n" +
			"head revision, defragments, stores a new full snapshot and (with --enable-snapshot-lease-renewal) renews\n" +
			"the snapshot leases in $POD_NAMESPACE with its revision. Run by druid's compaction Job.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	fs := cmd.Flags()
	o.storeFlags = storeflags.Bind(fs, &o.store, "", "")
	fs.StringVar(&o.dataDir, podwire.FlagDataDir, "/var/etcd/data/compaction.etcd", "scratch data directory (removed before and after)")
	fs.BoolVar(&o.renewLeases, podwire.FlagEnableSnapshotLeaseRenewal, false, "renew the full and delta snapshot leases with the new snapshot's revision")
	fs.StringVar(&o.fullLease, podwire.FlagFullSnapshotLeaseName, "full-snapshot-revisions", "full snapshot lease")
	fs.StringVar(&o.deltaLease, podwire.FlagDeltaSnapshotLeaseName, "delta-snapshot-revisions", "delta snapshot lease")
	fs.DurationVar(&o.snapTimeout, podwire.FlagEtcdSnapshotTimeout, compactor.DefaultSnapshotTimeout, "timeout of taking and uploading the new full snapshot")
	fs.DurationVar(&o.defragTimeout, podwire.FlagEtcdDefragTimeout, compactor.DefaultDefragTimeout, "timeout of the defragmentation")
	fs.Int64Var(&o.quotaBytes, podwire.FlagEmbeddedEtcdQuotaBytes, compactor.DefaultQuotaBytes, "backend quota of the private etcd")
	o.ignored = ignoredflags.New(fs)
	o.ignored.String(podwire.FlagRestorationTempSnapshotsDir, ignoredflags.WhyRestorationTempDir)
	o.ignored.String(podwire.FlagSnapstoreTempDirectory, ignoredflags.WhySnapstoreTempDir)
	o.ignored.Bool(podwire.FlagCompressSnapshots, whyCompactCompression)
	o.ignored.String(podwire.FlagCompressionPolicy, whyCompactCompression)
	o.ignored.Duration("metrics-scrape-wait-duration", "the compaction serves no metrics endpoint to wait for: its result is its log and stdout")
	return cmd, o
}

// whyCompactCompression: druids of this project before the compacted snapshot took the compression of the
// snapshots it replaces passed the sidecar's compression flags to the compaction Job.
const whyCompactCompression = "the compacted snapshot is compressed like the newest snapshot it replaces, as upstream's compact writes it"

// compactorOptions completes everything but the store from the flags and the environment.
func (o *compactOptions) compactorOptions() (compactor.Options, error) {
	opts := compactor.Options{
		DataDir: o.dataDir, SnapshotTimeout: o.snapTimeout,
		DefragTimeout: o.defragTimeout, QuotaBytes: o.quotaBytes, Leases: snapshotter.NoLeases{},
	}
	if o.renewLeases {
		leases, err := o.leases()
		if err != nil {
			return compactor.Options{}, err
		}
		opts.Leases = leases
	}
	return opts, nil
}

func (o *compactOptions) leases() (*snapshotlease.Kubernetes, error) {
	ns := os.Getenv(o.namespaceEnvVar)
	if ns == "" {
		return nil, fmt.Errorf("snapshot lease renewal needs the namespace in $%s", o.namespaceEnvVar)
	}
	if o.fullLease == "" || o.deltaLease == "" {
		return nil, errors.New("snapshot lease renewal needs --full-snapshot-lease-name and --delta-snapshot-lease-name")
	}
	rc, err := config.GetConfig()
	if err != nil {
		return nil, fmt.Errorf("kubernetes client for snapshot lease renewal: %w", err)
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	return &snapshotlease.Kubernetes{Client: cs, Namespace: ns, FullName: o.fullLease, DeltaName: o.deltaLease}, nil
}

func (o *compactOptions) run(cmd *cobra.Command) error {
	log := toolLogger(cmd)
	ignoredflags.Log(log, o.ignored.Given())
	opts, err := o.compactorOptions()
	if err != nil {
		return err
	}
	store, err := openStore(cmd.Context(), o.storeFlags, log)
	if err != nil {
		return err
	}
	defer store.Close()
	opts.Store, opts.Log = store, log
	res, err := compactor.Compact(cmd.Context(), opts)
	if err != nil {
		return err
	}
	return printJSON(cmd.OutOrStdout(), map[string]any{
		"snapshot": res.Snapshot, "compactedDeltas": len(res.Restore.Deltas),
		"dbSizeBefore": res.DBSizeBefore, "dbSizeAfter": res.DBSizeAfter,
	})
}
