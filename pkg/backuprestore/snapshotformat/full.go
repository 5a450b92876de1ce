package snapshotformat

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
)

// fullReadChunk is how much is read from the source per call; the reader's memory is about twice this.
const fullReadChunk = 64 << 10

// FullSnapshotReader streams a full snapshot (etcd's Maintenance.Snapshot format) while verifying
// its sha256 trailer. The last 32 bytes are held back until the source ends, so with the trailer
// stripped the reader yields exactly the bbolt database. The final Read returns an error wrapping
// ErrChecksumMismatch (or ErrTruncated) instead of io.EOF when the contents are corrupted: a consumer
// that treats any error as failure never accepts a corrupted database.
type FullSnapshotReader struct {
	src         io.Reader
	name        string
	keepTrailer bool
	hash        hash.Hash
	buf         []byte // held-back tail (checksumSize bytes) followed by newly read bytes
	held        int    // bytes of buf holding data not yet released
	out         []byte // released bytes not yet returned
	outBuf      []byte
	done        bool
	err         error // returned once out is drained after done
	size        int64 // database bytes hashed so far
}

// NewFullSnapshotReader verifies src, naming the object as name in errors. With keepTrailer the
// checksum is passed through after it was verified (for uploading the stream as it came from etcd);
// without, only the database is returned (for writing a member's db file).
func NewFullSnapshotReader(src io.Reader, name string, keepTrailer bool) *FullSnapshotReader {
	return &FullSnapshotReader{
		src:         src,
		name:        name,
		keepTrailer: keepTrailer,
		hash:        sha256.New(),
		buf:         make([]byte, checksumSize+fullReadChunk),
		outBuf:      make([]byte, fullReadChunk),
	}
}

// DatabaseSize is the number of database bytes (trailer excluded) read so far; the database size once
// the reader reached EOF.
func (f *FullSnapshotReader) DatabaseSize() int64 {
	return f.size
}

// Read implements io.Reader.
func (f *FullSnapshotReader) Read(p []byte) (int, error) {
	for len(f.out) == 0 {
		if f.done {
			return 0, f.err
		}
		if err := f.fill(); err != nil {
			return 0, err
		}
	}
	n := copy(p, f.out)
	f.out = f.out[n:]
	return n, nil
}

// fill reads one chunk from the source and releases everything but the last checksumSize bytes.
func (f *FullSnapshotReader) fill() error {
	n, err := f.src.Read(f.buf[f.held:])
	f.held += n
	if release := f.held - checksumSize; release > 0 {
		f.hash.Write(f.buf[:release])
		f.size += int64(release)
		f.out = f.outBuf[:copy(f.outBuf, f.buf[:release])]
		f.held = copy(f.buf, f.buf[release:f.held])
	}
	switch {
	case errors.Is(err, io.EOF):
		f.finish()
		return nil
	case err != nil:
		return fmt.Errorf("reading full snapshot %s: %w", f.name, err)
	}
	return nil
}

// finish checks the trailer once the source is exhausted.
func (f *FullSnapshotReader) finish() {
	f.done = true
	f.err = io.EOF
	if f.held < checksumSize {
		f.err = fmt.Errorf("full snapshot %s (%d bytes) is %w", f.name, f.size+int64(f.held), ErrTruncated)
		return
	}
	trailer := f.buf[:checksumSize]
	if sum := f.hash.Sum(nil); !bytes.Equal(sum, trailer) {
		f.err = fmt.Errorf("full snapshot %s is corrupted: %w (computed %x, stored %x)", f.name, ErrChecksumMismatch, sum, trailer)
		return
	}
	if f.keepTrailer {
		f.out = append(f.out, trailer...)
	}
}

// VerifyFullSnapshot reads src to the end and reports whether its trailer matches; it returns the
// database size. Used to check a stored object without restoring it.
func VerifyFullSnapshot(src io.Reader, name string) (int64, error) {
	r := NewFullSnapshotReader(src, name, false)
	if _, err := io.Copy(io.Discard, r); err != nil {
		return r.DatabaseSize(), err
	}
	return r.DatabaseSize(), nil
}
