package restorer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"go.etcd.io/etcd/api/v3/mvccpb"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshotformat"
)

// ErrDiscontinuous reports a delta whose events do not continue the revisions before it (or do not
// match its name): applying it would silently lose or reorder writes.
var ErrDiscontinuous = errors.New("delta snapshot breaks revision continuity")

// Deltas are read one object at a time by a goroutine that fetches, decompresses, decodes and
// checksums them while the replay writes the events it decoded before: eventBatchSize events per
// hand-over, at most eventBatchesAhead batches ahead, so memory does not depend on the size of a delta.
const (
	eventBatchSize    = 512
	eventBatchesAhead = 8
)

// eventBatch is a run of events of delta number delta; end marks its last batch, sent once the delta
// was read to its end and its checksum matched.
type eventBatch struct {
	delta  int
	events []*mvccpb.Event
	end    bool
	err    error
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
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, db); err != nil {
		_ = f.Close()
		return fmt.Errorf("downloading %s: %w", snap, err)
	}
	return f.Close()
}

// applyDeltas replays the deltas in order. Each delta's events must continue the revision the
// database is at when it starts: events at or below it are skipped (an overlap), the first new
// revision is the next one, revisions grow by one, and the events start and end at the revisions its
// name claims. Events after target are not applied; the delta holding them is still read to its end,
// because its checksum covers the whole object: events up to target are trusted only once it matched.
// Events are applied before their delta's checksum is known; a delta that turns out corrupted fails
// the restore, whose work directory, database included, is then thrown away.
func (r *restore) applyDeltas(ctx context.Context, rp *replayer, deltas []*snapshot.Snapshot, target int64, progress *progress) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan eventBatch, eventBatchesAhead)
	go r.readDeltas(ctx, deltas, batches)
	defer func() {
		cancel()
		for range batches { // let the reader end
		}
	}()
	applied, first, seen := rp.revision(), int64(0), int64(0)
	for b := range batches {
		if b.err != nil {
			return b.err
		}
		snap := deltas[b.delta]
		for _, ev := range b.events {
			rev := ev.Kv.ModRevision
			if first == 0 {
				first = rev
			}
			if seen = rev; rev > target {
				continue
			}
			if rev <= applied {
				rp.skipped++
				continue
			}
			if rev != rp.revision() && rev != rp.revision()+1 {
				return r.explain(ctx, snap, fmt.Errorf("%w: %s has revision %d after %d", ErrDiscontinuous, snap, rev, rp.revision()))
			}
			if err := rp.apply(rev, ev); err != nil {
				return r.explain(ctx, snap, fmt.Errorf("applying %s: %w", snap, err))
			}
		}
		progress.applied(rp.revision())
		if !b.end {
			continue
		}
		if first != snap.StartRevision || seen != snap.LastRevision {
			return fmt.Errorf("%w: %s holds revisions %d..%d, its name says %d..%d",
				ErrDiscontinuous, snap, first, seen, snap.StartRevision, snap.LastRevision)
		}
		if want := min(snap.LastRevision, target); rp.revision() != want {
			return fmt.Errorf("%w: after %s the database is at revision %d, want %d", ErrDiscontinuous, snap, rp.revision(), want)
		}
		applied, first = rp.revision(), 0
	}
	return ctx.Err()
}

// readDeltas sends the events of every delta in order, then closes out. It stops at the first error,
// which it sends.
func (r *restore) readDeltas(ctx context.Context, deltas []*snapshot.Snapshot, out chan<- eventBatch) {
	defer close(out)
	send := func(b eventBatch) bool {
		select {
		case out <- b:
			return true
		case <-ctx.Done():
			return false
		}
	}
	for i, snap := range deltas {
		err := r.streamDelta(ctx, snap, func(events []*mvccpb.Event) bool {
			return send(eventBatch{delta: i, events: events})
		})
		if err != nil {
			send(eventBatch{delta: i, err: err})
			return
		}
		if !send(eventBatch{delta: i, end: true}) {
			return
		}
	}
}

// streamDelta fetches one delta and hands its events to emit in batches; it returns nil once the
// delta was read to its end and its checksum matched.
func (r *restore) streamDelta(ctx context.Context, snap *snapshot.Snapshot, emit func([]*mvccpb.Event) bool) error {
	raw, err := r.opts.Store.Fetch(ctx, snap)
	if err != nil {
		return err
	}
	defer raw.Close()
	delta, err := snapshotformat.OpenDeltaStream(raw, snap, r.opts.MaxDeltaSize)
	if err != nil {
		return err
	}
	defer delta.Close()
	batch := make([]*mvccpb.Event, 0, eventBatchSize)
	for ev, err := range delta.Events() {
		if err != nil {
			return err
		}
		if batch = append(batch, ev); len(batch) == eventBatchSize {
			if !emit(batch) {
				return ctx.Err()
			}
			batch = make([]*mvccpb.Event, 0, eventBatchSize)
		}
	}
	if len(batch) > 0 && !emit(batch) {
		return ctx.Err()
	}
	return ctx.Err()
}

// explain returns why snap could not be applied: its corruption if it is corrupted (the checksum at
// its end had not been reached when its events went wrong), else err.
func (r *restore) explain(ctx context.Context, snap *snapshot.Snapshot, err error) error {
	if cerr := r.streamDelta(ctx, snap, func([]*mvccpb.Event) bool { return true }); cerr != nil && ctx.Err() == nil {
		return cerr
	}
	return err
}
