package app

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/restorer"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/storeflags"
)

// restoreOptions are the flags of `etcdbrctl restore`; the member flags carry etcd's own names and
// defaults, so a restore command line reads like the etcd command line that starts the member after it.
type restoreOptions struct {
	store           snapstore.Config
	storeFlags      *storeflags.Store
	dataDir         string
	name            string
	initialCluster  string
	peerURLs        []string
	token           string
	missingLeaseTTL time.Duration
	revision        int64
	time            string
}

func newRestoreCommand() (*cobra.Command, *restoreOptions) {
	o := &restoreOptions{}
	cmd := &cobra.Command{
		Use:   "restore",
		Short: "Restore an etcd member's data directory from the latest full snapshot and its deltas in the store, or to a chosen revision or time",
		Long: `Restore an etcd member's data directory from the backups in the store.

Without --revision or --time it restores the latest state: the newest full snapshot and every delta after it.

--revision R restores exactly the state at revision R: the newest full snapshot at or below R, then the
delta snapshots' events up to and including R, none after. The restored member is at revision R.

--time T (RFC3339) restores the highest revision of a snapshot (full or delta) taken at or before T, as the
snapshot names record it to the second; writes after that snapshot are not restored even if they happened
before T. The revision restored is printed; --revision is the exact form.

A target the store cannot restore exactly is refused before anything is written: older than the oldest full
snapshot kept, newer than the newest stored revision, or in a gap of the delta snapshots. The store is only
read, never written. The data directory must not exist or be empty; start a new etcd cluster on it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := o.target()
			if err != nil {
				return err
			}
			log := toolLogger(cmd)
			store, err := openStore(cmd.Context(), o.storeFlags, log)
			if err != nil {
				return err
			}
			defer store.Close()
			res, err := restorer.Restore(cmd.Context(), o.restorerOptions(opts, store, log))
			if err != nil {
				return o.nameTargetFlag(err)
			}
			return printJSON(cmd.OutOrStdout(), map[string]any{
				"revision": res.Revision, "fullSnapshot": res.Full, "deltaSnapshots": len(res.Deltas),
				"appliedRevisions": res.AppliedRevisions, "seconds": res.Duration.Seconds(),
			})
		},
	}
	fs := cmd.Flags()
	o.storeFlags = storeflags.Bind(fs, &o.store, "", "")
	fs.StringVar(&o.dataDir, "data-dir", "default.etcd", "data directory to create; it must not exist or be empty")
	fs.StringVar(&o.name, "name", "default", "member name")
	fs.StringVar(&o.initialCluster, "initial-cluster", "default=http://localhost:2380", "initial cluster (name=peerURL,...)")
	fs.StringSliceVar(&o.peerURLs, "initial-advertise-peer-urls", []string{"http://localhost:2380"}, "this member's peer URLs")
	fs.StringVar(&o.token, "initial-cluster-token", "etcd-cluster", "initial cluster token")
	fs.DurationVar(&o.missingLeaseTTL, "missing-lease-ttl", restorer.DefaultMissingLeaseTTL,
		"TTL of leases that keys refer to but no snapshot holds (granted after the full snapshot)")
	fs.Int64Var(&o.revision, revisionFlag, 0, "restore exactly the state at this revision instead of the latest")
	fs.StringVar(&o.time, timeFlag, "", "restore the highest revision of a snapshot taken at or before this RFC3339 time (e.g. 2026-11-28T14:00:00Z) instead of the latest")
	cmd.MarkFlagsMutuallyExclusive(revisionFlag, timeFlag)
	return cmd, o
}

const (
	revisionFlag = "revision"
	timeFlag     = "time"
)

// target checks the target flags and returns them as restorer options.
func (o *restoreOptions) target() (restorer.Options, error) {
	var opts restorer.Options
	if o.revision < 0 {
		return opts, fmt.Errorf("--%s %d: a revision is positive", revisionFlag, o.revision)
	}
	opts.TargetRevision = o.revision
	if o.time != "" {
		t, err := time.Parse(time.RFC3339, o.time)
		if err != nil {
			return opts, fmt.Errorf("--%s %q is not an RFC3339 time (e.g. 2026-11-28T14:00:00Z): %w", timeFlag, o.time, err)
		}
		opts.TargetTime = t
	}
	return opts, nil
}

// nameTargetFlag names the target flag in a refusal of its target, so the operator knows which value to
// change.
func (o *restoreOptions) nameTargetFlag(err error) error {
	if !errors.Is(err, restorer.ErrTargetNotInStore) && !errors.Is(err, snapshot.ErrRevisionGap) {
		return err
	}
	switch {
	case o.revision != 0:
		return fmt.Errorf("--%s %d: %w", revisionFlag, o.revision, err)
	case o.time != "":
		return fmt.Errorf("--%s %s: %w", timeFlag, o.time, err)
	}
	return err
}

// restorerOptions completes opts (the target) with the store and the member flags.
func (o *restoreOptions) restorerOptions(opts restorer.Options, store snapstore.SnapStore, log logr.Logger) restorer.Options {
	opts.Store, opts.DataDir, opts.Name, opts.InitialCluster = store, o.dataDir, o.name, strings.TrimSpace(o.initialCluster)
	opts.InitialAdvertisePeerURLs, opts.ClusterToken, opts.MissingLeaseTTL, opts.Log = o.peerURLs, o.token, o.missingLeaseTTL, log
	return opts
}
