package boltstream

import (
	"fmt"
)

// maxAssembledPage bounds one multi-page (overflow) page held while it streams in. etcd's largest
// value is its request size limit (1.5 MiB by default, rarely raised past a few MiB), so a leaf
// larger than this is not a page of a live etcd database.
const maxAssembledPage = 256 << 20

// etcd's bucket and meta-key names (go.etcd.io/etcd/server/v3/storage/schema).
const (
	keyBucket           = "key"
	metaBucket          = "meta"
	finishedCompactKey  = "finishedCompactRev"
	scheduledCompactKey = "scheduledCompactRev"
)

// page kinds recorded per page id
const (
	kindUnseen byte = iota
	kindLeaf
	kindBranch
)

// Scanner is an io.Writer that observes a bbolt database stream (as etcd's Maintenance.Snapshot
// sends it) and, once everything was written, reports the etcd revision of that database. Put it
// beside the real consumer with io.TeeReader. Bytes after the last whole page (etcd's sha256 trailer)
// are ignored.
type Scanner struct {
	pageSize int
	metas    []meta
	cur      []byte // bytes of the page at position pos collected so far
	pos      uint64 // position (page id) of the page being collected
	pending  []*assembly
	spare    []byte // buffer of a finished assembly, for the next one
	err      error

	kind     []byte  // per page id
	lastRev  []int64 // per page id: main revision of a leaf's last key, if it is a revision key
	branches map[uint64][]uint64
	buckets  map[uint64]map[string][]byte // leaf page id → bucket entries (name → bucket value)
	metaRevs map[uint64]map[string]int64  // leaf page id → compaction revisions found in it
}

// assembly collects a page with overflow pages.
type assembly struct {
	id   uint64
	buf  []byte
	need int
}

// NewScanner returns a scanner expecting a stream from its first byte.
func NewScanner() *Scanner {
	return &Scanner{
		branches: map[uint64][]uint64{},
		buckets:  map[uint64]map[string][]byte{},
		metaRevs: map[uint64]map[string]int64{},
	}
}

// Write implements io.Writer. It never fails the stream: a malformed database is reported by Revision,
// so that the snapshot's own checksum verification decides about the stream first.
func (s *Scanner) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 && s.err == nil {
		size := s.pageSize
		if size == 0 {
			size = pageHeaderSize + metaSize // enough to learn the page size from meta page 0
		} else if len(s.cur) == 0 && len(p) >= size {
			// A whole page in p: handled in place, without collecting it first (page keeps no
			// reference to its argument).
			s.page(p[:size])
			p = p[size:]
			s.pos++
			continue
		}
		take := min(size-len(s.cur), len(p))
		s.cur = append(s.cur, p[:take]...)
		p = p[take:]
		if len(s.cur) < size {
			continue
		}
		if s.pageSize == 0 {
			s.learnPageSize()
			continue
		}
		s.page(s.cur)
		s.cur = s.cur[:0]
		s.pos++
	}
	return n, nil
}

func (s *Scanner) learnPageSize() {
	ps := int(le.Uint32(s.cur[pageHeaderSize+8:]))
	if le.Uint32(s.cur[pageHeaderSize:]) != boltMagic || ps < 512 || ps > 1<<20 || ps&(ps-1) != 0 {
		s.err = fmt.Errorf("not a bbolt database: no valid page size in the first meta page")
		return
	}
	s.pageSize = ps
	s.cur = append(make([]byte, 0, ps), s.cur...)
}

// page handles the whole page at position s.pos. It copies what it keeps: p may be the caller's buffer.
func (s *Scanner) page(p []byte) {
	if s.pos < 2 {
		if m, err := parseMeta(p); err == nil {
			s.metas = append(s.metas, m)
		}
		if s.pos == 1 {
			s.allocate()
		}
		return
	}
	if s.kind == nil || s.pos >= uint64(len(s.kind)) {
		return // past the end of the database: nothing reachable lives there
	}
	s.feedPending(p)
	h := parseHeader(p)
	if h.id != s.pos || (h.flags != branchPageFlag && h.flags != leafPageFlag) {
		return // a free page, an overflow continuation or garbage: the walk never reaches it
	}
	if h.overflow == 0 {
		s.record(h.id, p)
		return
	}
	need := (int(h.overflow) + 1) * s.pageSize
	if s.pos+uint64(h.overflow) >= uint64(len(s.kind)) || need > maxAssembledPage {
		return // cannot be a live page; a live one would be missing and reported by Revision
	}
	s.pending = append(s.pending, &assembly{id: h.id, buf: append(s.assemblyBuffer(need), p...), need: need})
}

// assemblyBuffer returns an empty buffer of at least size bytes capacity, reusing the one of the last
// finished assembly: databases with large values consist mostly of multi-page pages, assembled one
// after the other.
func (s *Scanner) assemblyBuffer(size int) []byte {
	if buf := s.spare; cap(buf) >= size {
		s.spare = nil
		return buf[:0]
	}
	return make([]byte, 0, size)
}

// feedPending appends the page to every multi-page page being assembled and records finished ones.
func (s *Scanner) feedPending(p []byte) {
	kept := s.pending[:0]
	for _, a := range s.pending {
		a.buf = append(a.buf, p...)
		if len(a.buf) == a.need {
			s.record(a.id, a.buf)
			if cap(a.buf) > cap(s.spare) {
				s.spare = a.buf // record keeps no reference to the page
			}
			continue
		}
		kept = append(kept, a)
	}
	s.pending = kept
}

// allocate sizes the per-page tables after both meta pages were seen.
func (s *Scanner) allocate() {
	if len(s.metas) == 0 {
		s.err = fmt.Errorf("not a bbolt database: both meta pages are invalid")
		return
	}
	var hw uint64
	for _, m := range s.metas {
		hw = max(hw, m.highWater)
	}
	s.kind = make([]byte, hw)
	s.lastRev = make([]int64, hw)
}

// record keeps what the final walk may need from a branch or leaf page.
func (s *Scanner) record(id uint64, p []byte) {
	if parseHeader(p).flags == branchPageFlag {
		if children, ok := branchChildren(p); ok {
			s.kind[id] = kindBranch
			s.branches[id] = children
		}
		return
	}
	var last []byte
	ok := leafElements(p, func(flags uint32, key, value []byte) {
		last = key
		if flags&bucketLeafFlag != 0 {
			if s.buckets[id] == nil {
				s.buckets[id] = map[string][]byte{}
			}
			s.buckets[id][string(key)] = append([]byte(nil), value...)
			return
		}
		if k := string(key); k == finishedCompactKey || k == scheduledCompactKey {
			if rev, ok := mainRevision(value); ok {
				if s.metaRevs[id] == nil {
					s.metaRevs[id] = map[string]int64{}
				}
				s.metaRevs[id][k] = rev
			}
		}
	})
	if !ok {
		return
	}
	s.kind[id] = kindLeaf
	if rev, ok := mainRevision(last); ok {
		s.lastRev[id] = rev
	}
}
