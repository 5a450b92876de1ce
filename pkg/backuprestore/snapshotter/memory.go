package snapshotter

// The delta memory limit (Config.DeltaSnapshotMemoryLimit) bounds every event the snapshotter holds:
// those buffered for the next delta and those of a delta being stored, which stay in memory until the
// store has them (a failed upload puts them back). A delta is cut once the buffer reaches half the limit,
// so that the next one can fill while it is stored; when the two together reach the limit (a slow or
// failing store, a long full snapshot holding the cut back) the watch pauses, asks for a cut again
// after 5 s, then after twice as long each time up to a minute (besides the cut of every delta period),
// and resumes from the revision after the last one held once a cut or a full snapshot made
// room. The revisions written meanwhile stay in etcd: the sidecar's NOSPACE recovery compacts no further
// than the watch delivered, a compaction by etcd itself (its periodic auto-compaction) past them ends in
// the full snapshot that replaces a compacted watch, and a term that ends because the quorum is lost
// stores them from the local member after its buffer (Flush). The events held exceed the limit by at most
// the watch response that took them there (etcd sends a watcher that fell behind up to 1,000 revisions
// at once).

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

// bufferedBytes is the size of the buffered events, as the memory limit counts them.
func (s *Snapshotter) bufferedBytes() int64 {
	s.bufMu.Lock()
	defer s.bufMu.Unlock()
	return s.bufSize
}
