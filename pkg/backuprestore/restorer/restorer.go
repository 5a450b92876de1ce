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
)

// restore is one run of Restore.
type restore struct {
	opts Options
	log  logr.Logger
	work string // temporary directory next to the data directory
}

// Restore rebuilds opts.DataDir from the latest snap stream in opts.Store, or from the one ending at
// opts.TargetRevision or opts.TargetTime. It only lists and reads the store, never writes to it. On error
// the data directory is as it was (absent or empty) and the temporary work directory is removed; a
// target the store cannot restore is refused before the work directory is created.
func Restore(ctx context.Context, opts Options) (Result, error) {
	start := time.Now()
	if err := opts.validate(); err != nil {
		return Result{}, fmt.Errorf("restore options: %w", err)
	}
	if err := checkTarget(opts.DataDir); err != nil {
		return Result{}, err
	}
	r := &restore{opts: opts, log: opts.Log.WithName("restorer")}
	p, err := r.plan(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("restoring %s: %w", opts.DataDir, err)
	}
	work, err := os.MkdirTemp(filepath.Dir(opts.DataDir), "."+filepath.Base(opts.DataDir)+".restore-")
	if err != nil {
		return Result{}, fmt.Errorf("creating the restore work directory: %w", err)
	}
	defer os.RemoveAll(work)
	r.work = work
	res, err := r.run(ctx, p)
	if err != nil {
		return Result{}, fmt.Errorf("restoring %s: %w", opts.DataDir, err)
	}
	res.Duration = time.Since(start)
	r.log.Info("Restored data directory", "dataDir", opts.DataDir, "revision", res.Revision,
		"deltaRevisions", res.AppliedRevisions, "took", res.Duration)
	return res, nil
}

// run builds the member data directory in the work directory from the planned full snapshot, replays
// the deltas into its database up to the target revision and moves it into place once everything was
// read and verified.
func (r *restore) run(ctx context.Context, p plan) (Result, error) {
	stream := p.stream
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
	res, err := r.replay(ctx, p, filepath.Join(member, "member", "snap", "db"))
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

// replay applies the deltas on top of the full snapshot's data in the member database at dbPath, up to
// and including the plan's target revision.
func (r *restore) replay(ctx context.Context, p plan, dbPath string) (Result, error) {
	stream := p.stream
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
	if base > p.target {
		rp.abort()
		return Result{}, fmt.Errorf("full snapshot %s holds revisions up to %d, past the target revision %d", stream.Full, base, p.target)
	}
	// A full snapshot of the upstream sidecar may hold revisions past the one in its name; what it
	// holds already is skipped like an overlap.
	progress := newProgress(r.log, base, p.target, r.opts.ProgressInterval)
	if err := r.applyDeltas(ctx, rp, stream.Deltas, p.target, progress); err != nil {
		rp.abort()
		return Result{}, err
	}
	res.Revision, res.AppliedRevisions = rp.revision(), rp.revision()-base
	res.SkippedEvents, res.MissingLeases = rp.skipped, rp.missing
	if err := rp.close(); err != nil {
		return Result{}, fmt.Errorf("closing the replayed database: %w", err)
	}
	if res.Revision != p.target {
		return Result{}, fmt.Errorf("replay ended at revision %d, the target is %d", res.Revision, p.target)
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
