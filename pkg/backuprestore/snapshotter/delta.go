package snapshotter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshotformat"
)

// errDeltaGap reports buffered events that do not continue the store's last revision; storing them
// would make a snap stream with a gap, so a full snapshot is taken instead.
var errDeltaGap = errors.New("buffered events do not continue the stored revision")

// eventOverhead is the heap an event holds beyond its key and value: the decoded Event and KeyValue (each
// an allocation of its own, with protobuf's internal fields), its entry in the buffer and the allocator's
// rounding of the key; 241 bytes measured with Go 1.26 and etcd's API 3.7 (see
// TestBufferedSizeCoversTheHeapOfTheEvents). Counting less (it was 128) let the buffer hold a quarter more
// heap than --delta-snapshot-memory-limit for values of a few hundred bytes.
const eventOverhead = 256

// eventSize is what an event costs in the buffer, for the memory limit.
func eventSize(ev *mvccpb.Event) int64 {
	return int64(len(ev.Kv.Key)+len(ev.Kv.Value)) + eventOverhead
}

// watchLoop keeps a watch on every key from the revision after the last stored or buffered one. A
// compacted start revision cannot be watched any more: a full snapshot replaces the lost events.
func (s *Snapshotter) watchLoop(ctx context.Context) {
	for ctx.Err() == nil {
		err := s.watch(ctx)
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, errWatchPaused) {
			continue
		}
		var compacted *compactedError
		switch {
		case errors.As(err, &compacted):
			s.log.Info("Watch revision was compacted, taking a full snapshot", "revision", compacted.rev)
			// Not TakeFull: the watch is down, so there is nothing to wait for before the snapshot.
			s.opMu.Lock()
			_, err := s.takeFullLocked(ctx, false)
			s.opMu.Unlock()
			if err == nil {
				continue
			}
		case errors.Is(err, errWatchBroke):
			s.log.Info("The watch for delta snapshots broke, opening it again", "error", err.Error())
			continue
		default:
			s.log.Error(err, "Watch for delta snapshots ended, restarting")
		}
		select {
		case <-ctx.Done():
		case <-time.After(retryDelay):
		}
	}
}

// errWatchPaused ends a watch that paused for the memory limit and may go on.
var errWatchPaused = errors.New("the delta watch paused for the memory limit")

// errWatchBroke wraps the error of a watch that had delivered responses before it failed: the stream broke
// (a connection reset, etcd restarting) rather than etcd refusing it. It is opened again at once, as
// clientv3's watcher would have done; opening waits for the connection, and one that etcd refuses (no
// leader yet) waits retryDelay before the next attempt.
var errWatchBroke = errors.New("the delta watch broke")

type compactedError struct{ rev int64 }

func (e *compactedError) Error() string {
	return fmt.Sprintf("revision compacted (compact revision %d)", e.rev)
}

func (s *Snapshotter) watch(ctx context.Context) error {
	s.bufMu.Lock()
	from := s.watchedRev + 1
	s.bufMu.Unlock()
	w, err := openWatch(ctx, s.watchCli, from, true)
	if err != nil {
		return err
	}
	defer w.close()
	for delivered := false; ; delivered = true {
		resp, err := w.next()
		if err != nil && delivered {
			return fmt.Errorf("%w: %w", errWatchBroke, err)
		}
		if err != nil {
			return err
		}
		if room := s.observe(resp); room != nil {
			w.close()
			return s.pause(ctx, room)
		}
	}
}

// pause waits, with the watch closed, until the events held are under the memory limit again. A cut
// that failed (the store down) leaves them at the limit, and no watch response asks for the next one
// meanwhile: it asks after retryDelay, and after twice as long each time the events are still held,
// up to maxPausedRetryDelay, since every attempt uploads up to the whole limit again (the cut of every
// delta period comes besides).
func (s *Snapshotter) pause(ctx context.Context, room <-chan struct{}) error {
	s.bufMu.Lock()
	buffered, storing, watched := s.bufSize, s.storing, s.watchedRev
	s.bufMu.Unlock()
	s.log.Info("Pausing the delta watch: the events buffered and being stored reached the delta snapshot memory limit",
		"bufferedBytes", buffered, "storingBytes", storing, "limitBytes", s.cfg.DeltaSnapshotMemoryLimit, "watchedRevision", watched)
	s.metrics.paused(true)
	defer s.metrics.paused(false)
	delay := retryDelay
	retry := time.NewTimer(delay)
	defer retry.Stop()
	for waiting := true; waiting; {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-room:
			waiting = false
		case <-retry.C:
			select {
			case s.cutNow <- struct{}{}:
			default:
			}
			delay = nextPausedRetryDelay(delay)
			retry.Reset(delay)
		}
	}
	s.log.Info("Resuming the delta watch", "fromRevision", watched+1)
	return errWatchPaused
}

// maxPausedRetryDelay bounds the backoff of a paused watch's cuts: a store that is back is used again
// within a minute.
const maxPausedRetryDelay = time.Minute

// nextPausedRetryDelay is the wait after a paused watch's cut that left the events held at the limit.
func nextPausedRetryDelay(previous time.Duration) time.Duration {
	return min(2*previous, maxPausedRetryDelay)
}

// observe buffers the events of a watch response (dropping revisions already stored) and signals a
// cut when the buffer reaches the cut threshold. Per event it only appends; waiters are woken and the
// gauges set once per response, whose events are in revision order. While the events held reach the
// memory limit it returns the channel that says when there is room again: the watch pauses until then.
func (s *Snapshotter) observe(resp *pb.WatchResponse) <-chan struct{} {
	now := s.now()
	s.bufMu.Lock()
	watched := progressRevision(resp)
	for _, ev := range resp.Events {
		if ev.Kv.ModRevision <= s.lastRev {
			continue
		}
		s.events = append(s.events, bufferedEvent{ev: ev, observed: now})
		s.bufSize += eventSize(ev)
		watched = ev.Kv.ModRevision
	}
	s.advanceWatched(watched)
	s.reportPending()
	cut := s.bufSize >= s.cutThreshold()
	var room <-chan struct{}
	if s.heldOverLimit() {
		room = s.room
	}
	s.bufMu.Unlock()
	if cut {
		select {
		case s.cutNow <- struct{}{}:
		default:
		}
	}
	return room
}

// deltaLoop cuts a delta every period and whenever the buffer reaches the cut threshold.
func (s *Snapshotter) deltaLoop(ctx context.Context) {
	t := time.NewTicker(s.cfg.DeltaSnapshotPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.cutNow:
		}
		s.opMu.Lock()
		_, err := s.cutDeltaLocked(ctx)
		if errors.Is(err, errDeltaGap) {
			_, err = s.takeFullLocked(ctx, false)
		}
		s.opMu.Unlock()
		if err != nil {
			s.log.Error(err, "Delta snapshot failed")
		}
	}
}

// TakeDelta stores every revision etcd had when it was called (waiting for the watch to deliver them)
// as a delta snapshot. It returns nil without error when there was nothing new.
func (s *Snapshotter) TakeDelta(ctx context.Context) (*snapshot.Snapshot, error) {
	if err := s.waitForCurrentRevision(ctx); err != nil {
		return nil, err
	}
	s.opMu.Lock()
	defer s.opMu.Unlock()
	return s.cutDeltaLocked(ctx)
}

// waitForCurrentRevision waits until the watch has delivered every revision etcd has now.
func (s *Snapshotter) waitForCurrentRevision(ctx context.Context) error {
	rev, err := s.currentRevision(ctx)
	if err != nil {
		return err
	}
	return s.waitWatched(ctx, rev)
}

// waitWatched waits until the watch has delivered every revision up to rev. The watch wakes the wait
// whenever it advances: with each write it delivers and with etcd's periodic progress notifications.
func (s *Snapshotter) waitWatched(ctx context.Context, rev int64) error {
	for {
		s.bufMu.Lock()
		reached, progress := s.watchedRev >= rev, s.progress
		s.bufMu.Unlock()
		if reached {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the watch to reach revision %d: %w", rev, ctx.Err())
		case <-progress:
		}
	}
}

// cutDeltaLocked stores the buffered events as one delta snapshot; opMu must be held. An empty buffer
// stores nothing, but when etcd is indeed still at the stored revision the delta lease is renewed:
// the backup is as current as it can be.
func (s *Snapshotter) cutDeltaLocked(ctx context.Context) (*snapshot.Snapshot, error) {
	s.bufMu.Lock()
	events, size, stored := s.events, s.bufSize, s.lastRev
	s.events, s.bufSize, s.storing = nil, 0, size
	s.bufMu.Unlock()
	if len(events) == 0 {
		s.storingEnded(nil, 0)
		s.renewIfCurrent(ctx, stored)
		return nil, nil
	}
	first, last := events[0].ev.Kv.ModRevision, events[len(events)-1].ev.Kv.ModRevision
	if first != stored+1 {
		s.storingEnded(nil, 0)
		return nil, fmt.Errorf("%w: first buffered revision %d, stored revision %d", errDeltaGap, first, stored)
	}
	start := time.Now()
	snap := snapshot.NewIncr(first, last, s.now(), s.cfg.Compression)
	encoded, err := s.saveDelta(ctx, snap, events)
	if err != nil {
		s.storingEnded(events, size)
		s.metrics.failed(string(snapshot.KindIncr), time.Since(start))
		return nil, err
	}
	s.setStored(last)
	s.storingEnded(nil, 0)
	s.metrics.succeeded(snap, encoded, time.Since(start))
	s.log.Info("Took delta snapshot", "snapshot", snap.SnapName, "revision", last, "events", len(events))
	if err := s.leases.Update(ctx, snapshot.KindIncr, last, snap.SnapName); err != nil {
		s.log.Error(err, "Could not renew the delta snapshot lease", "revision", last)
	}
	return snap, nil
}

// saveDelta encodes the events into the upload as it proceeds (no second copy of the delta) and returns
// the delta's uncompressed size.
func (s *Snapshotter) saveDelta(ctx context.Context, snap *snapshot.Snapshot, events []bufferedEvent) (int64, error) {
	pr, pw := io.Pipe()
	done := make(chan struct{})
	var encoded int64
	go func() {
		defer close(done)
		zw, err := snapshot.NewCompressor(pw, s.cfg.Compression)
		if err == nil {
			enc := snapshotformat.NewDeltaEncoder(zw)
			for _, e := range events {
				if err = enc.Encode(e.ev, e.observed); err != nil {
					break
				}
			}
			err = errors.Join(err, enc.Close(), zw.Close())
			encoded = enc.Size()
		}
		pw.CloseWithError(err)
	}()
	err := s.store.Save(ctx, snap, pr)
	pr.CloseWithError(errors.New("upload ended"))
	<-done
	return encoded, err
}

// renewIfCurrent renews the delta lease when etcd's revision is still the stored one.
func (s *Snapshotter) renewIfCurrent(ctx context.Context, stored int64) {
	if rev, err := s.currentRevision(ctx); err != nil || rev != stored {
		return
	}
	if err := s.leases.Update(ctx, snapshot.KindIncr, stored, ""); err != nil {
		s.log.Error(err, "Could not renew the delta snapshot lease", "revision", stored)
	}
}
