package restorer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshotformat"
)

// ErrDiscontinuous reports a delta whose events do not continue the revisions before it (or do not
// match its name): applying it would silently lose or reorder writes.
var ErrDiscontinuous = errors.New("delta snapshot breaks revision continuity")

// plan is a verified snap stream, downloaded into the work directory.
type plan struct {
	stream     snapshot.Stream
	dbPath     string   // the full snapshot's database, trailer stripped
	deltaPaths []string // the deltas as stored (compressed), in stream order
	// revisions counts the revisions the deltas add on top of the full snapshot, for progress.
	revisions int64
}

// download fetches the latest snap stream into work and verifies all of it before anything is applied.
func (r *restore) download(ctx context.Context) (*plan, error) {
	snaps, err := r.opts.Store.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing the store: %w", err)
	}
	stream, err := snapshot.LatestStream(snaps)
	if err != nil {
		return nil, err
	}
	if stream.IsEmpty() {
		return nil, ErrNoSnapshots
	}
	for _, d := range stream.Dropped {
		r.log.Info("Ignoring delta covered by another delta", "snapshot", d.SnapName, "revision", d.LastRevision)
	}
	p := &plan{stream: stream, dbPath: filepath.Join(r.work, "db")}
	applied := int64(0)
	if stream.Full != nil {
		if err := r.downloadFull(ctx, stream.Full, p.dbPath); err != nil {
			return nil, err
		}
		applied = stream.Full.LastRevision
	}
	for i, d := range stream.Deltas {
		path := filepath.Join(r.work, "delta-"+strconv.Itoa(i))
		if err := r.downloadRaw(ctx, d, path); err != nil {
			return nil, err
		}
		n, err := r.checkDelta(d, path, applied)
		if err != nil {
			return nil, err
		}
		p.deltaPaths = append(p.deltaPaths, path)
		p.revisions += n
		applied = d.LastRevision
	}
	r.log.Info("Verified snap stream", "revision", applied, "deltas", len(stream.Deltas), "deltaRevisions", p.revisions)
	return p, nil
}

// downloadFull writes the full snapshot's database to path, verifying etcd's checksum on the way.
func (r *restore) downloadFull(ctx context.Context, snap *snapshot.Snapshot, path string) error {
	raw, err := r.opts.Store.Fetch(ctx, snap)
	if err != nil {
		return err
	}
	defer raw.Close()
	db, err := snapshotformat.OpenFull(raw, snap, false)
	if err != nil {
		return err
	}
	defer db.Close()
	return writeFile(path, db, snap)
}

// downloadRaw stores an object as it is in the store (still compressed).
func (r *restore) downloadRaw(ctx context.Context, snap *snapshot.Snapshot, path string) error {
	raw, err := r.opts.Store.Fetch(ctx, snap)
	if err != nil {
		return err
	}
	defer raw.Close()
	return writeFile(path, raw, snap)
}

func writeFile(path string, src io.Reader, snap *snapshot.Snapshot) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, src); err != nil {
		_ = f.Close()
		return fmt.Errorf("downloading %s: %w", snap, err)
	}
	return f.Close()
}

// openDelta decompresses and checksums a downloaded delta.
func (r *restore) openDelta(snap *snapshot.Snapshot, path string) (*snapshotformat.Delta, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return snapshotformat.OpenDelta(f, snap, r.opts.MaxDeltaSize)
}

// checkDelta verifies a delta's checksum and that its events continue revision applied: events at or
// below applied are skipped (overlap), the first new revision is applied+1, revisions grow by one, and
// the events end at the revision the name claims. It returns the number of new revisions.
func (r *restore) checkDelta(snap *snapshot.Snapshot, path string, applied int64) (int64, error) {
	delta, err := r.openDelta(snap, path)
	if err != nil {
		return 0, err
	}
	cur, first := applied, int64(0)
	for ev, err := range delta.Events() {
		if err != nil {
			return 0, err
		}
		rev := ev.EtcdEvent.Kv.ModRevision
		if first == 0 {
			first = rev
		}
		switch {
		case rev <= applied:
			continue
		case rev != cur && rev != cur+1:
			return 0, fmt.Errorf("%w: %s has revision %d after %d", ErrDiscontinuous, snap, rev, cur)
		}
		cur = rev
	}
	if first != snap.StartRevision || cur != snap.LastRevision {
		return 0, fmt.Errorf("%w: %s holds revisions %d..%d, its name says %d..%d",
			ErrDiscontinuous, snap, first, cur, snap.StartRevision, snap.LastRevision)
	}
	return cur - applied, nil
}
