package snapshotter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/boltstream"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshotformat"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
)

// TakeFull takes a full snapshot now (final marks the last one of a cluster shut down on purpose) and
// returns it once it is in the store. Buffered delta events are stored first, so that the deltas
// before the new full snapshot stay a complete chain.
func (s *Snapshotter) TakeFull(ctx context.Context, final bool) (*snapshot.Snapshot, error) {
	s.catchUpWatch(ctx)
	s.opMu.Lock()
	defer s.opMu.Unlock()
	return s.takeFullLocked(ctx, final)
}

// watchCatchUpTimeout bounds how long a full snapshot waits for the delta watch (see catchUpWatch).
const watchCatchUpTimeout = 5 * time.Second

// catchUpWatch waits, for at most watchCatchUpTimeout, until the watch has delivered every revision etcd
// has now, so that the delta stored before a full snapshot ends where the full snapshot begins. It is best
// effort: whatever the watch has not delivered yet is in the full snapshot anyway.
func (s *Snapshotter) catchUpWatch(ctx context.Context) {
	if !s.watching.Load() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, watchCatchUpTimeout)
	defer cancel()
	if err := s.waitForCurrentRevision(ctx); err != nil {
		s.log.V(1).Info("Delta watch did not catch up before the full snapshot; the full snapshot covers the rest", "error", err.Error())
	}
}

func (s *Snapshotter) takeFullLocked(ctx context.Context, final bool) (*snapshot.Snapshot, error) {
	if _, err := s.cutDeltaLocked(ctx); err != nil {
		s.log.Error(err, "Could not store buffered events before the full snapshot; the full snapshot covers them")
	}
	start := time.Now()
	snap, size, err := s.streamFull(ctx, final, false)
	if errors.Is(err, snapstore.ErrUnexpectedName) {
		// The revision read around the stream's start disagreed with the bytes: nothing was stored; the
		// staged upload names the snapshot from the bytes alone.
		s.log.Error(err, "Full snapshot revision was mispredicted; taking it again, staged")
		snap, size, err = s.streamFull(ctx, final, true)
	}
	if err != nil {
		s.metrics.failed(string(snapshot.KindFull), time.Since(start))
		s.log.Error(err, "Full snapshot failed")
		return nil, err
	}
	s.setStoredFull(snap.LastRevision)
	s.setStored(snap.LastRevision)
	s.metrics.succeeded(snap, size, time.Since(start))
	s.log.Info("Took full snapshot", "snapshot", snap.SnapName, "revision", snap.LastRevision, "bytes", size, "took", time.Since(start))
	if err := s.leases.Update(ctx, snapshot.KindFull, snap.LastRevision, snap.SnapName); err != nil {
		s.log.Error(err, "Could not renew snapshot leases", "revision", snap.LastRevision)
	}
	return snap, nil
}

// FullStreamOpenSince tells when the oldest full snapshot streaming from etcd now began (false: none
// streams). etcd holds a read transaction open on the member for as long as the stream lasts, and bbolt
// reuses no page freed after that read began until it ends: what a compaction after the stream's start
// frees does not count as free in etcd's figure of the data in use (the NOSPACE recovery asks, see
// defrag.KeepOptions.SnapshotStreamSince). The time is taken before the stream is opened, so it is never
// later than the read's start.
func (s *Snapshotter) FullStreamOpenSince() (time.Time, bool) { return s.fullStreams.oldest() }

// streamFull is the pipeline etcd → checksum verification and revision scan → compression → store, its
// stages overlapping on separate goroutines (see compressStream). The checksum trailer is verified and
// kept (a stored full snapshot is etcd's stream as sent); a corrupted stream fails the upload before its
// end, which then leaves no object. The name, and so the revision, is confirmed
// only after the last byte, from the bytes themselves: when the revision is known in advance (see
// expectedRevision) the upload goes straight to its key and completes only if the bytes agree, else it is
// staged and copied to its key (staged forces the latter).
func (s *Snapshotter) streamFull(ctx context.Context, final, staged bool) (*snapshot.Snapshot, int64, error) {
	created := s.now()
	defer s.fullStreams.open(time.Now())() // recorded closed after the cancel below; etcd ends its read a moment later
	// Cancelled when the upload fails, so that a stage blocked reading etcd's stream returns.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	before, beforeErr := s.currentRevision(ctx)
	// Cancelling ctx (deferred above) also ends the stream.
	rc, err := openSnapshot(ctx, s.cli)
	if err != nil {
		return nil, 0, fmt.Errorf("starting etcd snapshot: %w", err)
	}
	var expected *snapshot.Snapshot
	if !staged && beforeErr == nil {
		if rev, ok := s.expectedRevision(ctx, rc, before); ok {
			expected = snapshot.NewFull(rev, created, s.cfg.Compression, final)
		}
	}
	verifier := snapshotformat.NewFullSnapshotVerifier("etcd snapshot stream")
	scanner := boltstream.NewScanner()
	pr, pw := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		pw.CloseWithError(compressStream(pw, rc, verifier, scanner, s.cfg.Compression))
	}()
	name := func() (*snapshot.Snapshot, error) {
		rev, err := scanner.Revision()
		if err != nil {
			return nil, fmt.Errorf("revision of the snapshot: %w", err)
		}
		if last := s.LastRevision(); rev < last {
			return nil, fmt.Errorf("snapshot revision %d is below the stored revision %d: etcd is behind its backups", rev, last)
		}
		return snapshot.NewFull(rev, created, s.cfg.Compression, final), nil
	}
	var snap *snapshot.Snapshot
	if expected != nil {
		snap, err = s.stager.SaveExpected(ctx, pr, expected, name)
	} else {
		snap, err = s.stager.SaveStaged(ctx, pr, name)
	}
	if err != nil {
		cancel()
	}
	pr.CloseWithError(errors.New("upload ended")) // unblocks the compressor if the upload failed early
	<-done
	if err != nil {
		return nil, 0, err
	}
	return snap, verifier.DatabaseSize(), nil
}

// currentRevision is etcd's revision now (a linearizable read; with clientv3.WithSerializable the answering
// member's own, which needs no leader).
func (s *Snapshotter) currentRevision(ctx context.Context, opts ...clientv3.OpOption) (int64, error) {
	resp, err := s.cli.Get(ctx, "health", append([]clientv3.OpOption{clientv3.WithCountOnly()}, opts...)...)
	if err != nil {
		return 0, fmt.Errorf("current revision: %w", err)
	}
	return resp.Header.Revision, nil
}

// expectedRevision tells the revision of a snapshot stream before its bytes do, when no write came in
// while it was opened. etcd opens the snapshot's read transaction before it sends the first message,
// after committing every applied write; so with before read (linearizably) ahead of the request and the
// same revision read again once the first message arrived, the snapshot holds exactly the revisions up
// to before. A busy etcd often moves on in between; then the revision stays unknown (staged upload).
func (s *Snapshotter) expectedRevision(ctx context.Context, stream *snapshotStream, before int64) (int64, bool) {
	if err := stream.receiveFirst(); err != nil {
		return 0, false // the stream's reader reports the error
	}
	after, err := s.currentRevision(ctx)
	if err != nil || after != before || before < s.LastRevision() {
		return 0, false
	}
	return before, true
}
