package boltstream

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
)

// The on-disk format of bbolt (go.etcd.io/bbolt, file format version 2). bbolt writes its structures
// in the machine's byte order; every platform etcd supports is little-endian.
const (
	pageHeaderSize = 16 // id u64, flags u16, count u16, overflow u32
	elementSize    = 16 // branch: pos u32, ksize u32, pgid u64; leaf: flags u32, pos u32, ksize u32, vsize u32
	bucketHeader   = 16 // root pgid u64, sequence u64; an inline page follows when root is 0

	branchPageFlag = 0x01
	leafPageFlag   = 0x02
	bucketLeafFlag = 0x01

	boltMagic   = 0xED0CDAED
	boltVersion = 2
	metaSize    = 64 // magic, version, pageSize, flags, root bucket (16), freelist, pgid, txid, checksum
)

var le = binary.LittleEndian

// meta is the part of a bbolt meta page the walk needs.
type meta struct {
	pageSize  uint32
	root      uint64 // root page of the root bucket
	highWater uint64 // first page id past the end of the database
	txid      uint64
}

// parseMeta validates a meta page (magic, version, checksum) and decodes it.
func parseMeta(page []byte) (meta, error) {
	if len(page) < pageHeaderSize+metaSize {
		return meta{}, errors.New("meta page too short")
	}
	m := page[pageHeaderSize : pageHeaderSize+metaSize]
	if le.Uint32(m[0:]) != boltMagic {
		return meta{}, errors.New("not a bbolt database (bad magic)")
	}
	if v := le.Uint32(m[4:]); v != boltVersion {
		return meta{}, fmt.Errorf("unsupported bbolt version %d", v)
	}
	h := fnv.New64a()
	_, _ = h.Write(m[:56])
	if h.Sum64() != le.Uint64(m[56:]) {
		return meta{}, errors.New("meta page checksum mismatch")
	}
	return meta{pageSize: le.Uint32(m[8:]), root: le.Uint64(m[16:]), highWater: le.Uint64(m[40:]), txid: le.Uint64(m[48:])}, nil
}

// header is a page header.
type header struct {
	id       uint64
	flags    uint16
	count    uint16
	overflow uint32
}

func parseHeader(page []byte) header {
	return header{id: le.Uint64(page[0:]), flags: le.Uint16(page[8:]), count: le.Uint16(page[10:]), overflow: le.Uint32(page[12:])}
}

// branchChildren returns the child page ids of a branch page, or false if the page is malformed.
func branchChildren(page []byte) ([]uint64, bool) {
	h := parseHeader(page)
	if pageHeaderSize+int(h.count)*elementSize > len(page) {
		return nil, false
	}
	children := make([]uint64, h.count)
	for i := range children {
		children[i] = le.Uint64(page[pageHeaderSize+i*elementSize+8:])
	}
	return children, true
}

// leafElements calls fn for every element of a leaf page (or an inline bucket's page) in key order.
// It returns false if the page is malformed; fn is not called for elements out of bounds.
func leafElements(page []byte, fn func(flags uint32, key, value []byte)) bool {
	if len(page) < pageHeaderSize {
		return false
	}
	h := parseHeader(page)
	if pageHeaderSize+int(h.count)*elementSize > len(page) {
		return false
	}
	for i := range int(h.count) {
		off := pageHeaderSize + i*elementSize
		flags, pos := le.Uint32(page[off:]), uint64(le.Uint32(page[off+4:]))
		ksize, vsize := uint64(le.Uint32(page[off+8:])), uint64(le.Uint32(page[off+12:]))
		start := uint64(off) + pos
		if start+ksize+vsize > uint64(len(page)) {
			return false
		}
		fn(flags, page[start:start+ksize], page[start+ksize:start+ksize+vsize])
	}
	return true
}

// etcd's key bucket keys are an 8-byte big-endian main revision, '_', an 8-byte sub revision and, for
// tombstones, a trailing 't' (see go.etcd.io/etcd/server/v3/storage/mvcc revision encoding).
const (
	revKeyLen          = 17
	revKeyTombstoneLen = 18
	revKeySeparator    = '_'
)

// mainRevision decodes the main revision of a key-bucket key or a compaction-revision value.
func mainRevision(b []byte) (int64, bool) {
	if (len(b) != revKeyLen && len(b) != revKeyTombstoneLen) || b[8] != revKeySeparator {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(b[:8])), true
}
