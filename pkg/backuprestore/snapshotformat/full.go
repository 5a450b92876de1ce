package snapshotformat

import (
	"errors"
	"fmt"
	"io"
)

// fullReadChunk is the size of the reader's own buffer, used only for reads too small to be served in
// place (see Read).
const fullReadChunk = 64 << 10

// FullSnapshotReader streams a full snapshot (etcd's Maintenance.Snapshot format) while verifying
// its sha256 trailer. The last 32 bytes are held back until the source ends, so with the trailer
// stripped the reader yields exactly the bbolt database. The final Read returns an error wrapping
// ErrChecksumMismatch (or ErrTruncated) instead of io.EOF when the contents are corrupted: a consumer
// that treats any error as failure never accepts a corrupted database.
//
// The delta format has the same trailer, so deltas are read through it as well (see DeltaStream).
type FullSnapshotReader struct {
	src         io.Reader
	kind        string // "full snapshot" or "delta snapshot", for errors
	name        string
	keepTrailer bool
	verifier    *Verifier
	tail        [checksumSize]byte // held-back bytes: the trailer, unless more follows
	held        int                // bytes of tail in use
	out         []byte             // bytes released but not returned yet (small reads)
	small       []byte             // buffer for reads too small to be served in place
	done        bool
	err         error // returned once out is drained after done
}

// NewFullSnapshotReader verifies src, naming the object as name in errors. With keepTrailer the
// checksum is passed through after it was verified (for uploading the stream as it came from etcd);
// without, only the database is returned (for writing a member's db file).
func NewFullSnapshotReader(src io.Reader, name string, keepTrailer bool) *FullSnapshotReader {
	return newTrailerReader(src, "full snapshot", name, keepTrailer)
}

func newTrailerReader(src io.Reader, kind, name string, keepTrailer bool) *FullSnapshotReader {
	return &FullSnapshotReader{
		src:         src,
		kind:        kind,
		name:        name,
		keepTrailer: keepTrailer,
		verifier:    newVerifier(kind, name),
	}
}

// DatabaseSize is the number of database bytes (trailer excluded) read so far; the database size once
// the reader reached EOF.
func (f *FullSnapshotReader) DatabaseSize() int64 {
	return f.verifier.DatabaseSize()
}

// Read implements io.Reader. The source is read straight into p (the held-back bytes are moved in
// front of it), so each byte is copied once on its way through; only reads of p too small to hold
// more than the held-back window go through a buffer of the reader's own.
func (f *FullSnapshotReader) Read(p []byte) (int, error) {
	if len(f.out) == 0 && !f.done && len(p) > 2*checksumSize {
		return f.readInto(p)
	}
	for len(f.out) == 0 {
		if f.done {
			return 0, f.err
		}
		if f.small == nil {
			f.small = make([]byte, fullReadChunk)
		}
		n, err := f.readInto(f.small)
		f.out = f.small[:n]
		if err != nil && n == 0 {
			return 0, err
		}
	}
	n := copy(p, f.out)
	f.out = f.out[n:]
	return n, nil
}

// readInto fills buf with the held-back bytes followed by what one read of the source returns (the new
// bytes go to the verifier), and releases all but the last checksumSize bytes of it, which it holds back again. It returns
// the number of released bytes at the start of buf, which at the end include the verified trailer if
// it is kept. buf must be longer than checksumSize.
func (f *FullSnapshotReader) readInto(buf []byte) (int, error) {
	for {
		h := copy(buf, f.tail[:f.held])
		n, err := f.src.Read(buf[h:])
		total := h + n
		_, _ = f.verifier.Write(buf[h:total])
		release := max(total-checksumSize, 0)
		f.held = copy(f.tail[:], buf[release:total])
		switch {
		case errors.Is(err, io.EOF):
			if f.finish() && f.keepTrailer {
				return total, nil // buf[release:total] is the trailer
			}
			if release == 0 {
				return 0, f.err
			}
			return release, nil
		case err != nil:
			f.done, f.err = true, fmt.Errorf("reading %s %s: %w", f.kind, f.name, err)
			return release, f.err
		case release > 0:
			return release, nil
		}
	}
}

// finish checks the trailer once the source is exhausted and reports whether it matched.
func (f *FullSnapshotReader) finish() bool {
	f.done = true
	if f.err = f.verifier.Verify(); f.err != nil {
		return false
	}
	f.err = io.EOF
	return true
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
