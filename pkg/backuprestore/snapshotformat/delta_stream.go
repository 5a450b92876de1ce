package snapshotformat

import (
	"errors"
	"fmt"
	"io"
	"iter"

	"go.etcd.io/etcd/api/v3/mvccpb"
)

// deltaReadBuffer is the read-ahead of a DeltaStream: a fixed amount, whatever the delta's size.
const deltaReadBuffer = 256 << 10

// DeltaStream decodes a delta snapshot's events while it is read, in constant memory, and verifies
// the checksum trailer when the object ends. Unlike ReadDelta, events are yielded BEFORE the object is
// known to be intact: a consumer may only act on them in a way it can undo (e.g. write them to a
// scratch database that is thrown away on error) until the sequence has ended without an error.
type DeltaStream struct {
	name    string
	trailer *FullSnapshotReader
	size    *limitedReader
	codec   io.Closer // set by OpenDeltaStream
}

// Close releases the decompressor of a stream opened by OpenDeltaStream.
func (d *DeltaStream) Close() error {
	if d.codec == nil {
		return nil
	}
	return d.codec.Close()
}

// NewDeltaStream reads a decompressed delta snapshot from r; name identifies it in errors. maxSize
// bounds the decompressed size (0 means DefaultMaxDeltaSize), as for ReadDelta.
func NewDeltaStream(r io.Reader, name string, maxSize int64) *DeltaStream {
	if maxSize <= 0 {
		maxSize = DefaultMaxDeltaSize
	}
	size := &limitedReader{src: r, max: maxSize, name: name}
	return &DeltaStream{name: name, size: size, trailer: newTrailerReader(size, "delta snapshot", name, false)}
}

// Events yields the watch events in order (the observation time of each is not decoded). The sequence
// ends with a nil error only when the whole object was read and its checksum matched; otherwise the
// last pair carries the error. A corrupted object yields an error wrapping ErrChecksumMismatch (or
// ErrTruncated) even when the corruption first showed as undecodable JSON, because the rest of the
// object is read to its trailer before a decoding error is reported.
func (d *DeltaStream) Events() iter.Seq2[*mvccpb.Event, error] {
	return func(yield func(*mvccpb.Event, error) bool) {
		err := d.decode(yield)
		if err == nil || errors.Is(err, errStopped) {
			return
		}
		// Whatever went wrong, corruption is the better explanation if the trailer disagrees.
		if _, cerr := io.Copy(io.Discard, d.trailer); cerr != nil {
			err = cerr
		}
		yield(nil, err)
	}
}

// errStopped ends decoding when the consumer stops the iteration.
var errStopped = errors.New("stopped by the consumer")

// decode yields every event of the array, then reads the object to its end (where the trailer is
// checked).
func (d *DeltaStream) decode(yield func(*mvccpb.Event, error) bool) error {
	dec := newEventDecoder(d.trailer, deltaReadBuffer)
	if err := dec.start(); err != nil {
		return fmt.Errorf("decoding delta snapshot %s: %w", d.name, err)
	}
	for i := 0; ; i++ {
		ev, err := dec.next()
		if err != nil {
			return fmt.Errorf("decoding event %d of delta snapshot %s: %w", i, d.name, err)
		}
		if ev == nil {
			break
		}
		if ev.Kv == nil {
			return fmt.Errorf("event %d of delta snapshot %s has no key-value", i, d.name)
		}
		if !yield(ev, nil) {
			return errStopped
		}
	}
	err := dec.finish()
	if errors.Is(err, errTrailingData) {
		return fmt.Errorf("delta snapshot %s: %w", d.name, err)
	}
	return err // a read error names the object already
}

// limitedReader fails a read past its limit, naming the object (io.LimitReader would end it quietly,
// and the checksum would then report a truncation instead).
type limitedReader struct {
	src       io.Reader
	max, read int64
	name      string
}

func (l *limitedReader) Read(p []byte) (int, error) {
	n, err := l.src.Read(p)
	l.read += int64(n)
	if l.read > l.max {
		return n, fmt.Errorf("delta snapshot %s is larger than %d bytes", l.name, l.max)
	}
	return n, err
}
