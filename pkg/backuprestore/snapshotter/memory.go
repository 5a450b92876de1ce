package snapshotter

// The delta memory limit (Config.DeltaSnapshotMemoryLimit) bounds every event the snapshotter holds:
// those buffered for the next delta and those of a delta being stored, which stay in memory until the
// store has them (a failed upload puts them back). A delta is cut once the buffer reaches half the limit,
// so that the next one can fill while it is stored; when the two together reach the limit (a slow or
// failing store, a long full snapshot holding the cut back) the watch pauses and resumes from the
// revision after the last one held once a cut or a full snapshot made room. etcd keeps those revisions
// meanwhile (the sidecar compacts no further than the watch delivered); they are read again from its
// database, not lost.

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
