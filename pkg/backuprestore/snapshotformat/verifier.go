package snapshotformat

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"hash"
)

// Verifier checks the sha256 trailer of a snapshot written to it in pieces of any size. It hashes every
// byte but the last checksumSize bytes seen so far, which are the trailer once the stream has ended. It
// exists for a pipeline stage that holds the bytes anyway (the full snapshot pipeline hashes a chunk
// beside scanning and compressing it), so that verification needs neither a reader of its own in front
// of the stream nor a second pass; FullSnapshotReader verifies with it too.
type Verifier struct {
	kind, name string // for errors
	hash       hash.Hash
	tail       [checksumSize]byte // the last bytes written: the trailer, unless more follows
	held       int                // bytes of tail in use
	size       int64              // bytes hashed so far
}

// NewFullSnapshotVerifier verifies a full snapshot (etcd's Maintenance.Snapshot stream), naming the
// object as name in errors.
func NewFullSnapshotVerifier(name string) *Verifier {
	return newVerifier("full snapshot", name)
}

func newVerifier(kind, name string) *Verifier {
	return &Verifier{kind: kind, name: name, hash: sha256.New()}
}

// Write takes the next bytes of the stream; it never fails.
func (v *Verifier) Write(p []byte) (int, error) {
	if len(p) >= checksumSize {
		v.release(v.tail[:v.held])
		v.release(p[:len(p)-checksumSize])
		v.held = copy(v.tail[:], p[len(p)-checksumSize:])
		return len(p), nil
	}
	// Fewer new bytes than the window: the oldest held ones make room.
	if over := v.held + len(p) - checksumSize; over > 0 {
		v.release(v.tail[:over])
		v.held = copy(v.tail[:], v.tail[over:v.held])
	}
	v.held += copy(v.tail[v.held:], p)
	return len(p), nil
}

func (v *Verifier) release(b []byte) {
	v.hash.Write(b)
	v.size += int64(len(b))
}

// DatabaseSize is the number of bytes before the trailer written so far; the database size once the
// stream has ended.
func (v *Verifier) DatabaseSize() int64 {
	return v.size
}

// Verify checks the trailer once the whole stream was written: it returns an error wrapping
// ErrTruncated or ErrChecksumMismatch, naming the object, unless the contents match their trailer.
func (v *Verifier) Verify() error {
	if v.held < checksumSize {
		return fmt.Errorf("%s %s (%d bytes) is %w", v.kind, v.name, v.size+int64(v.held), ErrTruncated)
	}
	if sum := v.hash.Sum(nil); !bytes.Equal(sum, v.tail[:]) {
		return fmt.Errorf("%s %s is corrupted: %w (computed %x, stored %x)", v.kind, v.name, ErrChecksumMismatch, sum, v.tail[:])
	}
	return nil
}
