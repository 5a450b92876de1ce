package app

import (
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/restorer"
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
}

func newRestoreCommand() (*cobra.Command, *restoreOptions) {
	o := &restoreOptions{}
	cmd := &cobra.Command{
		Use:   "restore",
		Short: "Restore an etcd member's data directory from the latest full snapshot and its deltas in the store",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log := toolLogger(cmd)
			store, err := openStore(cmd.Context(), o.storeFlags, log)
			if err != nil {
				return err
			}
			defer store.Close()
			res, err := restorer.Restore(cmd.Context(), o.restorerOptions(store, log))
			if err != nil {
				return err
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
	return cmd, o
}

func (o *restoreOptions) restorerOptions(store snapstore.SnapStore, log logr.Logger) restorer.Options {
	return restorer.Options{
		Store: store, DataDir: o.dataDir, Name: o.name, InitialCluster: strings.TrimSpace(o.initialCluster),
		InitialAdvertisePeerURLs: o.peerURLs, ClusterToken: o.token, MissingLeaseTTL: o.missingLeaseTTL, Log: log,
	}
}
