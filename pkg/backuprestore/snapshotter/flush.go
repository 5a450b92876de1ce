package snapshotter

import (
	"context"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
)

// localReadTimeout bounds Flush's question for the local member's revision: the member may have stopped
// too, and the time left is for storing.
const localReadTimeout = 5 * time.Second

// Flush stores the revisions the watch delivered but no delta holds yet, and then those the local member
// holds beyond them, in deltas that each end once half the memory limit is buffered (after the watch
// response that reached it; a watch that paused for the memory limit, or lagged, left them in etcd); call
// it after Stop. It exists for a term that ended because the
// cluster has no leader (see the sidecar's backup leader): a cluster without quorum commits nothing more
// and no other sidecar backs it up, so these acknowledged writes would otherwise be lost if the cluster is
// bootstrapped again from the backup. It asks etcd nothing that needs a leader, stores the buffer before
// it reads anything from the member, and returns the last delta it stored. If the store already goes past
// the stored revision, another backup leader continued the deltas (and reads these revisions from etcd
// itself): nothing is stored twice.
func (s *Snapshotter) Flush(ctx context.Context) (*snapshot.Snapshot, error) {
	s.opMu.Lock()
	defer s.opMu.Unlock()
	stored := s.LastRevision()
	snaps, err := s.store.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing the store before storing the revisions after %d: %w", stored, err)
	}
	if stream, err := snapshot.LatestStream(snaps); err == nil && stream.LastRevision() > stored {
		s.log.Info("Not storing the buffered revisions: another backup leader continued the deltas",
			"storedRevision", stored, "storeRevision", stream.LastRevision())
		return nil, nil
	}
	last, err := s.cutBufferedLocked(ctx)
	if err != nil {
		return nil, err
	}
	target, err := s.localRevision(ctx)
	if err != nil {
		s.log.Info("Could not read the local member's revision; stored what the watch delivered", "error", err.Error())
		return last, nil
	}
	if s.WatchedRevision() < target {
		s.log.Info("Reading the revisions the delta watch had not delivered from the local member",
			"fromRevision", s.WatchedRevision()+1, "toRevision", target)
	}
	for s.WatchedRevision() < target {
		if err := s.bufferLocally(ctx, target); err != nil {
			s.log.Error(err, "Could not read the revisions beyond the watched one from the local member", "watchedRevision", s.WatchedRevision())
			return last, nil
		}
		snap, err := s.cutBufferedLocked(ctx)
		if err != nil {
			return last, err
		}
		if snap != nil {
			last = snap
		}
	}
	return last, nil
}

// cutBufferedLocked cuts a delta of the buffered events, if there are any; it asks etcd nothing (an empty
// cut would renew the delta lease after a linearizable read). opMu must be held.
func (s *Snapshotter) cutBufferedLocked(ctx context.Context) (*snapshot.Snapshot, error) {
	s.bufMu.Lock()
	pending := len(s.events)
	s.bufMu.Unlock()
	if pending == 0 {
		return nil, nil
	}
	return s.cutDeltaLocked(ctx)
}

// localRevision is the local member's revision, read from the member itself.
func (s *Snapshotter) localRevision(ctx context.Context) (int64, error) {
	rctx, cancel := context.WithTimeout(ctx, localReadTimeout)
	defer cancel()
	return s.currentRevision(rctx, clientv3.WithSerializable())
}

// bufferLocally buffers the local member's revisions after the watched one, until target or until the
// buffer reaches the cut threshold. The cluster may have no leader: the watch does not require one.
func (s *Snapshotter) bufferLocally(ctx context.Context, target int64) error {
	from := s.WatchedRevision() + 1
	w, err := openWatch(ctx, s.cli, from, false)
	if err != nil {
		return err
	}
	defer w.close()
	for {
		resp, err := w.next()
		if err != nil {
			return fmt.Errorf("watching the local member from revision %d: %w", from, err)
		}
		s.observe(resp)
		if s.WatchedRevision() >= target || s.bufferedBytes() >= s.cutThreshold() {
			return nil
		}
	}
}
