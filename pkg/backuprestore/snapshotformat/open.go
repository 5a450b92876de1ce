package snapshotformat

import (
	"fmt"
	"io"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
)

// OpenDelta decompresses a fetched delta object according to its name and verifies it. Every error
// names the object, whether the codec or the checksum found the corruption.
func OpenDelta(raw io.Reader, snap *snapshot.Snapshot, maxSize int64) (*Delta, error) {
	dec, err := snapshot.NewDecompressor(raw, snap.Compression())
	if err != nil {
		return nil, fmt.Errorf("delta snapshot %s: %w", snap, err)
	}
	defer dec.Close()
	return ReadDelta(dec, snap.String(), maxSize)
}

// OpenDeltaStream decompresses a fetched delta object according to its name and decodes its events as
// they are read, verifying the checksum at the end (see DeltaStream). Decompression runs ahead of the
// decoding on a goroutine of its own (gzip), by at most deltaReadAheadBlocks × deltaReadAheadBlock
// bytes. Closing the stream releases the codec only.
func OpenDeltaStream(raw io.Reader, snap *snapshot.Snapshot, maxSize int64) (*DeltaStream, error) {
	dec, err := snapshot.NewReadAheadDecompressor(raw, snap.Compression(), deltaReadAheadBlock, deltaReadAheadBlocks)
	if err != nil {
		return nil, fmt.Errorf("delta snapshot %s: %w", snap, err)
	}
	s := NewDeltaStream(dec, snap.String(), maxSize)
	s.codec = dec
	return s, nil
}

// The read-ahead of a delta's decompression: 1 MiB.
const (
	deltaReadAheadBlock  = 256 << 10
	deltaReadAheadBlocks = 4
)

// OpenFull decompresses a fetched full snapshot according to its name and returns a reader that
// verifies the etcd checksum trailer (see FullSnapshotReader); read and codec errors name the object.
// Closing it releases the codec only.
func OpenFull(raw io.Reader, snap *snapshot.Snapshot, keepTrailer bool) (io.ReadCloser, error) {
	dec, err := snapshot.NewDecompressor(raw, snap.Compression())
	if err != nil {
		return nil, fmt.Errorf("full snapshot %s: %w", snap, err)
	}
	return &fullSnapshotReadCloser{
		FullSnapshotReader: NewFullSnapshotReader(dec, snap.String(), keepTrailer),
		codec:              dec,
	}, nil
}

type fullSnapshotReadCloser struct {
	*FullSnapshotReader
	codec io.Closer
}

func (f *fullSnapshotReadCloser) Close() error { return f.codec.Close() }
