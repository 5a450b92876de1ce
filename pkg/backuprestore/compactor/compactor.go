package compactor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/go-logr/logr"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/restorer"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshotter"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
)

// Defaults of the timeouts, as upstream druid passes them (the Etcd API's defaults).
const (
	DefaultSnapshotTimeout = 15 * time.Minute
	DefaultDefragTimeout   = 15 * time.Minute
	// DefaultQuotaBytes is the backend quota of the private etcd: large, because the restored database
	// may be larger than etcd's 2 GiB default and compaction must not fail on a NOSPACE alarm.
	DefaultQuotaBytes = 8 << 30
)

// Options configure one compaction.
type Options struct {
	// Store holds the snap stream and receives the new full snapshot.
	Store snapstore.SnapStore
	// DataDir is the scratch data directory; whatever is there is removed first (a previous attempt's
	// leftovers) and at the end.
	DataDir string
	// Leases are renewed with the new snapshot's revision; nil means none.
	Leases snapshotter.LeaseUpdater
	// SnapshotTimeout bounds taking and uploading the new full snapshot; 0 means DefaultSnapshotTimeout.
	SnapshotTimeout time.Duration
	// DefragTimeout bounds the defragmentation; 0 means DefaultDefragTimeout.
	DefragTimeout time.Duration
	// QuotaBytes is the private etcd's backend quota; 0 means DefaultQuotaBytes.
	QuotaBytes int64
	Log        logr.Logger
	// Now is the clock of the new snapshot's name; nil means time.Now.
	Now func() time.Time
}

// Result describes a completed compaction.
type Result struct {
	// Snapshot is the new full snapshot.
	Snapshot *snapshot.Snapshot
	// Restore is how the old snap stream was restored.
	Restore restorer.Result
	// DBSizeBefore and DBSizeAfter are the database sizes before compaction and after defragmentation.
	DBSizeBefore, DBSizeAfter int64
}

// Compact replaces the latest snap stream by one newer full snapshot at the same revision.
func Compact(ctx context.Context, opts Options) (Result, error) {
	opts.defaults()
	log := opts.Log
	if err := os.RemoveAll(opts.DataDir); err != nil {
		return Result{}, fmt.Errorf("clearing scratch data directory: %w", err)
	}
	defer func() {
		if err := os.RemoveAll(opts.DataDir); err != nil {
			log.Error(err, "Could not remove the scratch data directory", "dir", opts.DataDir)
		}
	}()

	restored, err := restorer.Restore(ctx, restorer.Options{
		Store: opts.Store, DataDir: opts.DataDir, Name: memberName, ClusterToken: clusterToken,
		InitialCluster: memberName + "=" + placeholderPeerURL, InitialAdvertisePeerURLs: []string{placeholderPeerURL},
		Log: log,
	})
	if err != nil {
		return Result{}, fmt.Errorf("restoring the latest snap stream: %w", err)
	}
	res := Result{Restore: restored}
	log.Info("Restored the snap stream", "revision", restored.Revision, "deltas", len(restored.Deltas))

	srv, err := startPrivateEtcd(ctx, opts.DataDir, opts.QuotaBytes, log)
	if err != nil {
		return res, err
	}
	defer srv.stop()
	cli, err := srv.client()
	if err != nil {
		return res, err
	}
	defer cli.Close()

	if err := compactAndDefrag(ctx, cli, srv.endpoint, restored.Revision, opts, &res); err != nil {
		return res, err
	}
	snap, err := takeSnapshot(ctx, cli, opts, restored.Revision, compactedLike(restored))
	if err != nil {
		return res, err
	}
	res.Snapshot = snap
	log.Info("Compacted the snap stream", "snapshot", snap.SnapName, "revision", snap.LastRevision,
		"dbSizeBefore", res.DBSizeBefore, "dbSizeAfter", res.DBSizeAfter)
	return res, nil
}

func (o *Options) defaults() {
	if o.SnapshotTimeout <= 0 {
		o.SnapshotTimeout = DefaultSnapshotTimeout
	}
	if o.DefragTimeout <= 0 {
		o.DefragTimeout = DefaultDefragTimeout
	}
	if o.QuotaBytes <= 0 {
		o.QuotaBytes = DefaultQuotaBytes
	}
	if o.Leases == nil {
		o.Leases = snapshotter.NoLeases{}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	o.Log = o.Log.WithName("compactor")
}

// compactAndDefrag drops the history below the head revision and then returns the freed pages.
func compactAndDefrag(ctx context.Context, cli *clientv3.Client, endpoint string, head int64, opts Options, res *Result) error {
	status, err := cli.Status(ctx, endpoint)
	if err != nil {
		return fmt.Errorf("status of the private etcd: %w", err)
	}
	if status.Header.Revision != head {
		return fmt.Errorf("private etcd is at revision %d, the restore ended at %d", status.Header.Revision, head)
	}
	res.DBSizeBefore = status.DbSize
	// A revision compacted already (a full snapshot without deltas after it) is fine.
	if _, err := cli.Compact(ctx, head, clientv3.WithCompactPhysical()); err != nil && !isCompacted(err) {
		return fmt.Errorf("compacting at revision %d: %w", head, err)
	}
	dctx, cancel := context.WithTimeout(ctx, opts.DefragTimeout)
	defer cancel()
	if _, err := cli.Defragment(dctx, endpoint); err != nil {
		return fmt.Errorf("defragmenting: %w", err)
	}
	status, err = cli.Status(ctx, endpoint)
	if err != nil {
		return fmt.Errorf("status of the private etcd after defragmentation: %w", err)
	}
	res.DBSizeAfter = status.DbSize
	return nil
}

// compacted is how the new full snapshot is written: the compression and final mark of what it replaces.
type compacted struct {
	compression snapshot.Compression
	final       bool
}

// compactedLike takes, as upstream etcd-backup-restore's compactor does, the compression of the newest
// snapshot of the stream (the last delta, else the full snapshot): the sidecar's current setting, which the
// compaction Job is not told (the upstream druid passes it no compression flags). The final mark is kept
// only when no delta follows the final full snapshot, where upstream keeps it always: a final snapshot
// followed by deltas was contradicted by the cluster's later writes, and marking the compacted snapshot
// final would hide that from a copy waiting for the final snapshot (package copier).
func compactedLike(restored restorer.Result) compacted {
	var c compacted
	if n := len(restored.Deltas); n > 0 {
		c.compression = restored.Deltas[n-1].Compression()
	} else if restored.Full != nil {
		c.compression = restored.Full.Compression()
		c.final = restored.Full.IsFinal
	}
	return c
}

// takeSnapshot stores the new full snapshot through the sidecar's own pipeline and rejects it if etcd's
// revision moved (see the package documentation). The snapshotter renews no leases itself: they are
// renewed here only once the snapshot is known to be good.
func takeSnapshot(ctx context.Context, cli *clientv3.Client, opts Options, head int64, like compacted) (*snapshot.Snapshot, error) {
	snapper, err := snapshotter.New(snapshotter.Options{Config: snapshotter.OneShot(like.compression), Client: cli, Store: opts.Store, Leases: snapshotter.NoLeases{}, Log: opts.Log, Now: opts.Now})
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithTimeout(ctx, opts.SnapshotTimeout)
	defer cancel()
	snap, err := snapper.TakeFull(sctx, like.final)
	if err != nil {
		return nil, fmt.Errorf("taking the compacted full snapshot: %w", err)
	}
	if snap.LastRevision != head {
		err := fmt.Errorf("the private etcd moved from revision %d to %d (a lease expired during compaction?): discarding %s",
			head, snap.LastRevision, snap.SnapName)
		return nil, errors.Join(err, opts.Store.Delete(context.WithoutCancel(ctx), snap))
	}
	if err := opts.Leases.Update(ctx, snapshot.KindFull, snap.LastRevision, snap.SnapName); err != nil {
		return snap, fmt.Errorf("renewing the snapshot leases with revision %d: %w", snap.LastRevision, err)
	}
	return snap, nil
}
