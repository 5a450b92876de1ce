package app

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/copier"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/storeflags"
	"github.com/gardener-etcd/gardener-etcd/pkg/ignoredflags"
	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
)

// Flag and variable prefixes of the source store, as druid's copy-backups Job renders them
// (pkg/druid/controller/copybackupstask: SourceFlagPrefix, SourceEnvPrefix).
const (
	sourceFlagPrefix = podwire.FlagPrefixSource
	sourceEnvPrefix  = "SOURCE_"
)

// copyOptions are the flags of `etcdbrctl copy` (the contract documented in
// pkg/druid/controller/copybackupstask): the unprefixed store flags locate the target, the "source-"
// ones the source.
type copyOptions struct {
	target, source           snapstore.Config
	targetFlags, sourceFlags *storeflags.Store
	maxBackups, maxAge       int
	waitFinal                bool
	waitTimeout              time.Duration
	pollInterval             time.Duration
	// ignored are the upstream copy Job's flags that mean nothing here.
	ignored *ignoredflags.Set
}

func newCopyCommand() (*cobra.Command, *copyOptions) {
	o := &copyOptions{}
	cmd := &cobra.Command{
		Use:   "copy",
		Short: "Copy backups from the source store to the target store",
		Long: "Copies the newest full snapshots (--max-backups-to-copy, --max-backup-age days) with their deltas from the\n" +
			"source store to the target, verifying checksums on the way and skipping objects the target holds. With\n" +
			"--wait-for-final-snapshot it first waits until the source's latest full snapshot is final.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	fs := cmd.Flags()
	o.targetFlags = storeflags.Bind(fs, &o.target, "", "")
	o.sourceFlags = storeflags.Bind(fs, &o.source, sourceFlagPrefix, sourceEnvPrefix)
	fs.IntVar(&o.maxBackups, podwire.FlagMaxBackupsToCopy, -1, "number of newest full snapshots to copy (with their deltas); -1: all")
	fs.IntVar(&o.maxAge, podwire.FlagMaxBackupAge, -1, "copy no full snapshot older than this many days; -1: no limit")
	fs.BoolVar(&o.waitFinal, podwire.FlagWaitForFinalSnapshot, false, "wait until the source's latest full snapshot is final")
	fs.DurationVar(&o.waitTimeout, podwire.FlagWaitForFinalSnapshotTimeout, 0, "how long to wait for the final snapshot; 0: no limit")
	fs.DurationVar(&o.pollInterval, "wait-for-final-snapshot-poll-interval", copier.DefaultPollInterval, "how often the source is listed while waiting")
	o.ignored = ignoredflags.New(fs)
	o.ignored.String(podwire.FlagSnapstoreTempDirectory, ignoredflags.WhySnapstoreTempDir)
	o.ignored.String(sourceFlagPrefix+podwire.FlagSnapstoreTempDirectory, ignoredflags.WhySnapstoreTempDir)
	return cmd, o
}

func (o *copyOptions) copierOptions() copier.Options {
	return copier.Options{
		MaxBackups: o.maxBackups, MaxBackupAge: o.maxAge, WaitForFinalSnapshot: o.waitFinal,
		WaitForFinalSnapshotTimeout: o.waitTimeout, PollInterval: o.pollInterval,
	}
}

func (o *copyOptions) run(cmd *cobra.Command) error {
	log := toolLogger(cmd)
	ignoredflags.Log(log, o.ignored.Given())
	source, err := openStore(cmd.Context(), o.sourceFlags, log.WithValues("store", "source"))
	if err != nil {
		return err
	}
	defer source.Close()
	target, err := openStore(cmd.Context(), o.targetFlags, log.WithValues("store", "target"))
	if err != nil {
		return err
	}
	defer target.Close()
	opts := o.copierOptions()
	opts.Source, opts.Target, opts.Log = source, target, log
	res, err := copier.Copy(cmd.Context(), opts)
	if err != nil {
		return err
	}
	return printJSON(cmd.OutOrStdout(), map[string][]*snapshot.Snapshot{"copied": res.Copied, "skipped": res.Skipped})
}
