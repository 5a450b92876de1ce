package restorer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	"go.etcd.io/etcd/api/v3/mvccpb"
	etcdutlsnapshot "go.etcd.io/etcd/etcdutl/v3/snapshot"
	"go.uber.org/zap"
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

	p, err := r.download(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("restoring %s: %w", opts.DataDir, err)
	}
	res, err := r.replay(ctx, p)
	if err != nil {
		return Result{}, fmt.Errorf("restoring %s: %w", opts.DataDir, err)
	}
	if err := r.buildMember(p.dbPath); err != nil {
		return Result{}, fmt.Errorf("restoring %s: building the member data directory: %w", opts.DataDir, err)
	}
	res.Duration = time.Since(start)
	r.log.Info("Restored data directory", "dataDir", opts.DataDir, "revision", res.Revision,
		"deltaRevisions", res.AppliedRevisions, "took", res.Duration)
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

// replay applies the verified deltas on top of the full snapshot's database.
func (r *restore) replay(ctx context.Context, p *plan) (Result, error) {
	rp := openReplayer(p.dbPath, r.opts.MissingLeaseTTL)
	res := Result{Full: p.stream.Full, Deltas: p.stream.Deltas}
	base := rp.revision()
	if p.stream.Full != nil && base < p.stream.Full.LastRevision {
		_ = rp.close()
		return Result{}, fmt.Errorf("full snapshot %s holds revision %d only", p.stream.Full, base)
	}
	// A full snapshot of the deployed sidecar may hold revisions past the one in its name; what it
	// holds already is skipped like an overlap.
	progress := newProgress(r.log, base, p.stream.LastRevision(), r.opts.ProgressInterval)
	for i, d := range p.stream.Deltas {
		if err := ctx.Err(); err != nil {
			_ = rp.close()
			return Result{}, err
		}
		if err := r.applyDelta(rp, d.String(), i, p, progress); err != nil {
			_ = rp.close()
			return Result{}, err
		}
	}
	res.Revision, res.AppliedRevisions = rp.revision(), rp.revision()-base
	res.SkippedEvents, res.MissingLeases = rp.skipped, rp.missing
	if err := rp.close(); err != nil {
		return Result{}, fmt.Errorf("closing the replayed database: %w", err)
	}
	if want := p.stream.LastRevision(); res.Revision != want {
		return Result{}, fmt.Errorf("replay ended at revision %d, the last delta ends at %d", res.Revision, want)
	}
	return res, nil
}

// applyDelta replays one delta, grouping its events by revision.
func (r *restore) applyDelta(rp *replayer, name string, i int, p *plan, progress *progress) error {
	delta, err := r.openDelta(p.stream.Deltas[i], p.deltaPaths[i])
	if err != nil {
		return err
	}
	var group []*mvccpb.Event
	var groupRev int64
	flush := func() error {
		if len(group) == 0 {
			return nil
		}
		if err := rp.apply(groupRev, group); err != nil {
			return fmt.Errorf("applying %s: %w", name, err)
		}
		progress.applied(groupRev)
		group = group[:0]
		return nil
	}
	applied := rp.revision()
	for ev, err := range delta.Events() {
		if err != nil {
			return err
		}
		rev := ev.EtcdEvent.Kv.ModRevision
		if rev <= applied {
			rp.skipped++
			continue
		}
		if rev != groupRev {
			if err := flush(); err != nil {
				return err
			}
			groupRev = rev
		}
		group = append(group, ev.EtcdEvent)
	}
	return flush()
}

// buildMember lets etcd's own restore turn the database into a member data directory (WAL, raft
// snapshot, membership of the initial cluster) in the work directory, then renames it into place.
func (r *restore) buildMember(dbPath string) error {
	out := filepath.Join(r.work, "data")
	err := etcdutlsnapshot.NewV3(zap.NewNop()).Restore(etcdutlsnapshot.RestoreConfig{
		SnapshotPath:        dbPath,
		Name:                r.opts.Name,
		OutputDataDir:       out,
		PeerURLs:            r.opts.InitialAdvertisePeerURLs,
		InitialCluster:      r.opts.InitialCluster,
		InitialClusterToken: r.opts.ClusterToken,
		SkipHashCheck:       true, // the checksum was verified on download; the replayed file has none
	})
	if err != nil {
		return err
	}
	// An empty target directory is replaced by rename(2); checkTarget made sure it is empty.
	if err := os.Rename(out, r.opts.DataDir); err != nil {
		return err
	}
	return syncDir(filepath.Dir(r.opts.DataDir))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
