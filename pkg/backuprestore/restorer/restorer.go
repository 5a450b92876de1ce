package restorer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	etcdutlsnapshot "go.etcd.io/etcd/etcdutl/v3/snapshot"
	"go.etcd.io/etcd/server/v3/lease"
	"go.etcd.io/etcd/server/v3/storage/backend"
	"go.etcd.io/etcd/server/v3/storage/mvcc"
	"go.uber.org/zap"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
)

// restore is one run of Restore.
type restore struct {
	opts Options
	log  logr.Logger
	work string // temporary directory next to the data directory
}

// Restore rebuilds opts.DataDir from the latest snap stream in opts.Store. On error the data directory
// is as it was (absent or empty) and the temporary work directory is removed.
func Restore(ctx context.Context, opts Options) (Result, error) {
	start := time.Now()
	if err := opts.validate(); err != nil {
		return Result{}, fmt.Errorf("restore options: %w", err)
	}
	if err := checkTarget(opts.DataDir); err != nil {
		return Result{}, err
	}
	work, err := os.MkdirTemp(filepath.Dir(opts.DataDir), "."+filepath.Base(opts.DataDir)+".restore-")
	if err != nil {
		return Result{}, fmt.Errorf("creating the restore work directory: %w", err)
	}
	defer os.RemoveAll(work)
	r := &restore{opts: opts, log: opts.Log.WithName("restorer"), work: work}
	res, err := r.run(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("restoring %s: %w", opts.DataDir, err)
	}
	res.Duration = time.Since(start)
	r.log.Info("Restored data directory", "dataDir", opts.DataDir, "revision", res.Revision,
		"deltaRevisions", res.AppliedRevisions, "took", res.Duration)
	return res, nil
}

// run builds the member data directory in the work directory from the full snapshot, replays the
// deltas into its database and moves it into place once everything was read and verified.
func (r *restore) run(ctx context.Context) (Result, error) {
	stream, err := r.latestStream(ctx)
	if err != nil {
		return Result{}, err
	}
	dbPath := filepath.Join(r.work, "db")
	if stream.Full != nil {
		if err := r.downloadFull(ctx, stream.Full, dbPath); err != nil {
			return Result{}, err
		}
	} else if err := createEmptyDatabase(dbPath); err != nil {
		return Result{}, fmt.Errorf("creating an empty database: %w", err)
	}
	member := filepath.Join(r.work, "data")
	if err := r.buildMember(dbPath, member); err != nil {
		return Result{}, fmt.Errorf("building the member data directory: %w", err)
	}
	if err := os.Remove(dbPath); err != nil { // the member holds its own copy
		return Result{}, err
	}
	res, err := r.replay(ctx, stream, filepath.Join(member, "member", "snap", "db"))
	if err != nil {
		return Result{}, err
	}
	if err := install(member, r.opts.DataDir); err != nil {
		return Result{}, fmt.Errorf("moving the restored member into place: %w", err)
	}
	return res, nil
}

// checkTarget refuses a data directory with contents: replacing a member's data is the caller's
// decision (the initializer's), never a side effect of a restore.
func checkTarget(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("checking data directory %s: %w", dir, err)
	case len(entries) > 0:
		return fmt.Errorf("data directory %s is not empty; refusing to restore over it", dir)
	}
	return nil
}

// replay applies the deltas on top of the full snapshot's data in the member database at dbPath.
func (r *restore) replay(ctx context.Context, stream snapshot.Stream, dbPath string) (Result, error) {
	rp, err := openReplayer(dbPath, r.opts.MissingLeaseTTL)
	if err != nil {
		return Result{}, err
	}
	res := Result{Full: stream.Full, Deltas: stream.Deltas}
	base := rp.revision()
	if stream.Full != nil && base < stream.Full.LastRevision {
		rp.abort()
		return Result{}, fmt.Errorf("full snapshot %s holds revision %d only", stream.Full, base)
	}
	// A full snapshot of the upstream sidecar may hold revisions past the one in its name; what it
	// holds already is skipped like an overlap.
	progress := newProgress(r.log, base, stream.LastRevision(), r.opts.ProgressInterval)
	if err := r.applyDeltas(ctx, rp, stream.Deltas, progress); err != nil {
		rp.abort()
		return Result{}, err
	}
	res.Revision, res.AppliedRevisions = rp.revision(), rp.revision()-base
	res.SkippedEvents, res.MissingLeases = rp.skipped, rp.missing
	if err := rp.close(); err != nil {
		return Result{}, fmt.Errorf("closing the replayed database: %w", err)
	}
	if want := stream.LastRevision(); res.Revision != want {
		return Result{}, fmt.Errorf("replay ended at revision %d, the last delta ends at %d", res.Revision, want)
	}
	r.log.Info("Replayed delta snapshots", "revision", res.Revision, "deltas", len(stream.Deltas),
		"deltaRevisions", res.AppliedRevisions, "skippedEvents", res.SkippedEvents, "missingLeases", res.MissingLeases)
	return res, nil
}

// buildMember lets etcd's own restore turn the full snapshot's database into a member data directory
// (WAL, raft snapshot, membership of the initial cluster) at out. It runs before the deltas are
// replayed into the member's database: etcd's restore maps the whole database into memory, which is
// then only as large as the full snapshot, and it copies no replayed data. The deltas add key
// revisions and leases only, which neither the WAL nor the membership refer to.
func (r *restore) buildMember(dbPath, out string) error {
	return etcdutlsnapshot.NewV3(zap.NewNop()).Restore(etcdutlsnapshot.RestoreConfig{
		SnapshotPath:        dbPath,
		Name:                r.opts.Name,
		OutputDataDir:       out,
		PeerURLs:            r.opts.InitialAdvertisePeerURLs,
		InitialCluster:      r.opts.InitialCluster,
		InitialClusterToken: r.opts.ClusterToken,
		SkipHashCheck:       true, // the checksum was verified on download; the file has none
	})
}

// install moves the finished member directory to the data directory. An empty target directory is
// replaced by rename(2); checkTarget made sure it is empty.
func install(member, dataDir string) error {
	if err := os.Rename(member, dataDir); err != nil {
		return err
	}
	return syncDir(filepath.Dir(dataDir))
}

// createEmptyDatabase writes the database of an empty etcd (for a store holding deltas from revision 1
// only) with etcd's own store.
func createEmptyDatabase(path string) error {
	be := backend.NewDefaultBackend(zap.NewNop(), path)
	kv := mvcc.NewStore(zap.NewNop(), be, &lease.FakeLessor{}, mvcc.StoreConfig{})
	be.ForceCommit()
	return errors.Join(kv.Close(), be.Close())
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
