package boltstream

import (
	"errors"
	"fmt"
)

// maxTreeDepth guards the walk against cycles in a corrupted database; bbolt trees are a few levels.
const maxTreeDepth = 64

// Revision is the etcd revision of the database written so far; call it after the whole stream was
// written (and its checksum verified). It fails if the stream was not a complete etcd database.
func (s *Scanner) Revision() (int64, error) {
	if s.err != nil {
		return 0, s.err
	}
	if s.kind == nil {
		return 0, errors.New("incomplete bbolt database: meta pages missing")
	}
	if len(s.pending) > 0 {
		return 0, fmt.Errorf("incomplete bbolt database: page %d ends past the stream", s.pending[0].id)
	}
	m := s.metas[0]
	for _, other := range s.metas[1:] {
		if other.txid > m.txid {
			m = other
		}
	}
	// bbolt's Tx.WriteTo streams every page below the high-water mark. A shorter stream may still hold
	// every page the walk below reaches (small databases, pages reused from the freelist), so the walk
	// alone does not prove it complete.
	if s.pos < m.highWater {
		return 0, fmt.Errorf("incomplete bbolt database: the stream ends after %d of its %d pages", s.pos, m.highWater)
	}
	buckets := map[string][]byte{}
	err := s.walkLeaves(m.root, 0, func(id uint64) {
		for name, v := range s.buckets[id] {
			buckets[name] = v
		}
	})
	if err != nil {
		return 0, fmt.Errorf("root bucket: %w", err)
	}
	keyRev, err := s.highestKeyRevision(buckets[keyBucket])
	if err != nil {
		return 0, err
	}
	finished, scheduled, err := s.compactionRevisions(buckets[metaBucket])
	if err != nil {
		return 0, err
	}
	// As etcd's mvcc store on open: revision 1 for an empty store, never below a compaction revision
	// (the tombstones of the newest revision may have been compacted away).
	return max(1, keyRev, finished, scheduled), nil
}

// highestKeyRevision follows the rightmost path of the key bucket.
func (s *Scanner) highestKeyRevision(bucket []byte) (int64, error) {
	if len(bucket) < bucketHeader {
		return 0, fmt.Errorf("not an etcd database: no %q bucket", keyBucket)
	}
	if root := le.Uint64(bucket); root == 0 {
		var rev int64
		if !leafElements(bucket[bucketHeader:], func(_ uint32, key, _ []byte) { rev, _ = mainRevision(key) }) {
			return 0, fmt.Errorf("%q bucket: malformed inline page", keyBucket)
		}
		return rev, nil
	}
	id := le.Uint64(bucket)
	for range maxTreeDepth {
		if err := s.check(id); err != nil {
			return 0, fmt.Errorf("%q bucket: %w", keyBucket, err)
		}
		if s.kind[id] == kindLeaf {
			return s.lastRev[id], nil
		}
		children := s.branches[id]
		if len(children) == 0 {
			return 0, fmt.Errorf("%q bucket: empty branch page %d", keyBucket, id)
		}
		id = children[len(children)-1]
	}
	return 0, fmt.Errorf("%q bucket: deeper than %d levels", keyBucket, maxTreeDepth)
}

// compactionRevisions reads finishedCompactRev and scheduledCompactRev from etcd's meta bucket.
func (s *Scanner) compactionRevisions(bucket []byte) (finished, scheduled int64, err error) {
	if len(bucket) < bucketHeader {
		return 0, 0, fmt.Errorf("not an etcd database: no %q bucket", metaBucket)
	}
	take := func(k string, rev int64) {
		switch k {
		case finishedCompactKey:
			finished = rev
		case scheduledCompactKey:
			scheduled = rev
		}
	}
	if le.Uint64(bucket) == 0 {
		ok := leafElements(bucket[bucketHeader:], func(_ uint32, key, value []byte) {
			if rev, ok := mainRevision(value); ok {
				take(string(key), rev)
			}
		})
		if !ok {
			return 0, 0, fmt.Errorf("%q bucket: malformed inline page", metaBucket)
		}
		return finished, scheduled, nil
	}
	err = s.walkLeaves(le.Uint64(bucket), 0, func(id uint64) {
		for k, rev := range s.metaRevs[id] {
			take(k, rev)
		}
	})
	if err != nil {
		return 0, 0, fmt.Errorf("%q bucket: %w", metaBucket, err)
	}
	return finished, scheduled, nil
}

// walkLeaves calls fn for every leaf below page id, left to right.
func (s *Scanner) walkLeaves(id uint64, depth int, fn func(uint64)) error {
	if depth > maxTreeDepth {
		return fmt.Errorf("deeper than %d levels", maxTreeDepth)
	}
	if err := s.check(id); err != nil {
		return err
	}
	if s.kind[id] == kindLeaf {
		fn(id)
		return nil
	}
	for _, child := range s.branches[id] {
		if err := s.walkLeaves(child, depth+1, fn); err != nil {
			return err
		}
	}
	return nil
}

// check reports a referenced page the stream did not contain as a valid branch or leaf.
func (s *Scanner) check(id uint64) error {
	if id < 2 || id >= uint64(len(s.kind)) || s.kind[id] == kindUnseen {
		return fmt.Errorf("page %d is referenced but not in the stream as a valid branch or leaf page", id)
	}
	return nil
}
