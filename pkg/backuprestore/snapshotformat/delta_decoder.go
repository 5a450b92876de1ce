package snapshotformat

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"iter"
)

// DefaultMaxDeltaSize bounds how much of a delta snapshot is held in memory for verification. Deltas
// are cut by the snapshotter's memory limit (100 MiB by default), so a larger object is not a delta.
const DefaultMaxDeltaSize int64 = 1 << 30

// Delta is a delta snapshot whose checksum has been verified; its events are decoded lazily.
type Delta struct {
	name string
	json []byte
}

// ReadDelta reads a whole (decompressed) delta snapshot and verifies its sha256 trailer before
// returning, so no event of a corrupted object is ever applied. name identifies the object in errors.
// maxSize bounds the bytes read (0 means DefaultMaxDeltaSize).
func ReadDelta(r io.Reader, name string, maxSize int64) (*Delta, error) {
	if maxSize <= 0 {
		maxSize = DefaultMaxDeltaSize
	}
	data, err := io.ReadAll(io.LimitReader(r, maxSize+1))
	if err != nil {
		return nil, fmt.Errorf("reading delta snapshot %s: %w", name, err)
	}
	if int64(len(data)) > maxSize {
		return nil, fmt.Errorf("delta snapshot %s is larger than %d bytes", name, maxSize)
	}
	if len(data) < checksumSize {
		return nil, fmt.Errorf("delta snapshot %s (%d bytes) is %w", name, len(data), ErrTruncated)
	}
	body, trailer := data[:len(data)-checksumSize], data[len(data)-checksumSize:]
	if sum := sha256.Sum256(body); !bytes.Equal(sum[:], trailer) {
		return nil, fmt.Errorf("delta snapshot %s is corrupted: %w (computed %x, stored %x)", name, ErrChecksumMismatch, sum, trailer)
	}
	return &Delta{name: name, json: body}, nil
}

// Events yields the events in order. A decoding error (possible only for an object written by a
// faulty encoder, as the checksum matched) is yielded once and ends the sequence.
func (d *Delta) Events() iter.Seq2[*Event, error] {
	return func(yield func(*Event, error) bool) {
		dec := json.NewDecoder(bytes.NewReader(d.json))
		if err := expectDelim(dec, '['); err != nil {
			yield(nil, fmt.Errorf("decoding delta snapshot %s: %w", d.name, err))
			return
		}
		for i := 0; dec.More(); i++ {
			ev := &Event{}
			if err := dec.Decode(ev); err != nil {
				yield(nil, fmt.Errorf("decoding event %d of delta snapshot %s: %w", i, d.name, err))
				return
			}
			if ev.EtcdEvent == nil || ev.EtcdEvent.Kv == nil {
				yield(nil, fmt.Errorf("event %d of delta snapshot %s has no key-value", i, d.name))
				return
			}
			if !yield(ev, nil) {
				return
			}
		}
		if err := expectDelim(dec, ']'); err != nil {
			yield(nil, fmt.Errorf("decoding delta snapshot %s: %w", d.name, err))
		}
	}
}

// All decodes every event into a slice; convenient for small deltas and tests.
func (d *Delta) All() ([]*Event, error) {
	var out []*Event
	for ev, err := range d.Events() {
		if err != nil {
			return nil, err
		}
		out = append(out, ev)
	}
	return out, nil
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok != want {
		return fmt.Errorf("want %q, got %v", want, tok)
	}
	return nil
}
