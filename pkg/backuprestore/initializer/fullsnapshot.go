package initializer

import (
	"context"

	"github.com/go-logr/logr"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshotter"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
)

// FullSnapshotWith returns an Options.TakeFullSnapshot that uploads one full snapshot with the
// sidecar's own snapshotter configuration (compression, store), so that the post-restore snapshot is
// named and stored exactly like the backup leader's.
func FullSnapshotWith(cfg snapshotter.Config, store snapstore.SnapStore, log logr.Logger) func(context.Context, *clientv3.Client) error {
	return func(ctx context.Context, cli *clientv3.Client) error {
		s, err := snapshotter.New(snapshotter.Options{Config: cfg, Client: cli, Store: store, Log: log})
		if err != nil {
			return err
		}
		_, err = s.TakeFull(ctx, false)
		return err
	}
}
