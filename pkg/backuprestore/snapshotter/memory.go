package snapshotter

// The delta memory limit (Config.DeltaSnapshotMemoryLimit) bounds every event the snapshotter holds:
// those buffered for the next delta and those of a delta being stored, which stay in memory until the
// store has them (a failed upload puts them back). A delta is cut once the buffer reaches half the limit,
// so that the next one can fill while it is stored; when the two together reach the limit (a slow or
// failing store, a long full snapshot holding the cut back) the watch pauses, asks for a cut every
// retryDelay, and resumes from the revision after the last one held once a cut or a full snapshot made
// room. The revisions written meanwhile stay in etcd: the sidecar's NOSPACE recovery compacts no further
// than the watch delivered, a compaction by etcd itself (its periodic auto-compaction) past them ends in
// the full snapshot that replaces a compacted watch, and a term that ends while the watch pauses reads
// them from the local member before it stores its last delta (Flush).

// cutThreshold is the buffered size at which a delta is cut before its period ends.
func (s *Snapshotter) cutThreshold() int64 {
	return max(s.cfg.DeltaSnapshotMemoryLimit/2, 1)
}

// heldOverLimit tells whether the events held (buffered and being stored) reach the memory limit; bufMu
// must be held.
func (s *Snapshotter) heldOverLimit() bool {
	return s.bufSize+s.storing >= s.cfg.DeltaSnapshotMemoryLimit
}

// makeRoom wakes a paused watch once the events held are under the memory limit; bufMu must be held.
func (s *Snapshotter) makeRoom() {
	if !s.heldOverLimit() {
		close(s.room)
		s.room = make(chan struct{})
	}
}

// storingEnded records that a cut's events are no longer held for the store: stored, or put back in
// front of the buffer (putBack) when the upload failed.
func (s *Snapshotter) storingEnded(putBack []bufferedEvent, size int64) {
	s.bufMu.Lock()
	defer s.bufMu.Unlock()
	if putBack != nil {
		s.events, s.bufSize = append(putBack, s.events...), s.bufSize+size
	}
	s.storing = 0
	s.makeRoom()
}

// setPaused records whether the watch pauses for the memory limit, for the metric and for Flush.
func (s *Snapshotter) setPaused(p bool) {
	s.bufMu.Lock()
	s.paused = p
	s.bufMu.Unlock()
	s.metrics.paused(p)
}

// pausedAtStop tells whether the watch was paused when it stopped: etcd then holds revisions the
// snapshotter has not seen.
func (s *Snapshotter) pausedAtStop() bool {
	s.bufMu.Lock()
	defer s.bufMu.Unlock()
	return s.paused
}
