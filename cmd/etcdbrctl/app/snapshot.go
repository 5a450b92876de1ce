package app

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/etcdflags"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshotter"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/storeflags"
)

// snapshotOptions are the flags of `etcdbrctl snapshot`: the sidecar's etcd client, store and compression
// flags, so an operator takes a snapshot exactly as the sidecar would, plus --final.
type snapshotOptions struct {
	store       snapstore.Config
	storeFlags  *storeflags.Store
	etcd        *etcdflags.Client
	compression *storeflags.Compression
	final       bool
	timeout     time.Duration
}

func newSnapshotCommand() (*cobra.Command, *snapshotOptions) {
	o := &snapshotOptions{}
	cmd := &cobra.Command{
		Use:   "snapshot",
		Short: "Take a full snapshot of a running etcd into the store",
		Long: "Streams a full snapshot of the etcd at --endpoints through checksum verification and compression into\n" +
			"the store, named by the revision read from the snapshot itself. --final marks it as the last snapshot of a\n" +
			"cluster that is shut down on purpose (copy-backups tasks wait for it).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	fs := cmd.Flags()
	o.storeFlags = storeflags.Bind(fs, &o.store, "", "")
	o.etcd = etcdflags.Bind(fs)
	o.compression = storeflags.BindCompression(fs)
	fs.BoolVar(&o.final, "final", false, "mark the snapshot as the cluster's final one")
	fs.DurationVar(&o.timeout, "etcd-snapshot-timeout", 15*time.Minute, "timeout of taking and uploading the snapshot")
	return cmd, o
}

func (o *snapshotOptions) run(cmd *cobra.Command) error {
	log := toolLogger(cmd)
	compression, err := o.compression.Compression()
	if err != nil {
		return err
	}
	store, err := openStore(cmd.Context(), o.storeFlags, log)
	if err != nil {
		return err
	}
	defer store.Close()
	cli, err := o.etcd.New()
	if err != nil {
		return fmt.Errorf("etcd client: %w", err)
	}
	defer cli.Close()
	s, err := snapshotter.New(snapshotter.Options{Config: snapshotter.OneShot(compression), Client: cli, Store: store, Log: log})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout)
	defer cancel()
	snap, err := s.TakeFull(ctx, o.final)
	if err != nil {
		return err
	}
	return printJSON(cmd.OutOrStdout(), snap)
}
