package snapshotformat

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
)

// Event is one entry of a delta snapshot: a watch event and when the sidecar received it. The JSON
// names are the wire format existing backups use.
type Event struct {
	// EtcdEvent is the watch event; its Kv.ModRevision is the revision it belongs to.
	EtcdEvent *mvccpb.Event `json:"etcdEvent"`
	// Time is when the event was observed; informational.
	Time time.Time `json:"time"`
}

// DeltaEncoder writes a delta snapshot one event at a time, so the snapshotter never needs a second
// copy of a delta in memory: the JSON is hashed while it is written and the checksum appended on
// Close. The output is byte-for-byte what marshalling the whole []Event at once produces.
type DeltaEncoder struct {
	out    io.Writer // the destination, receives JSON and trailer
	hash   hash.Hash
	json   io.Writer // writes to out and hash
	size   int64     // bytes written to out
	count  int
	closed bool
}

// NewDeltaEncoder starts a delta snapshot written to w (typically a compressor in front of an upload).
func NewDeltaEncoder(w io.Writer) *DeltaEncoder {
	h := sha256.New()
	return &DeltaEncoder{out: w, hash: h, json: io.MultiWriter(w, h)}
}

// Encode appends one event.
func (e *DeltaEncoder) Encode(ev *mvccpb.Event, observed time.Time) error {
	if e.closed {
		return errors.New("delta encoder: encode after close")
	}
	data, err := json.Marshal(Event{EtcdEvent: ev, Time: observed})
	if err != nil {
		return fmt.Errorf("delta encoder: marshalling event %d: %w", e.count, err)
	}
	separator := []byte{','}
	if e.count == 0 {
		separator[0] = '['
	}
	if _, err := e.json.Write(separator); err != nil {
		return fmt.Errorf("delta encoder: writing event %d: %w", e.count, err)
	}
	if _, err := e.json.Write(data); err != nil {
		return fmt.Errorf("delta encoder: writing event %d: %w", e.count, err)
	}
	e.size += int64(len(separator) + len(data))
	e.count++
	return nil
}

// Size is the number of bytes written so far: the delta's uncompressed size, trailer included, once
// closed.
func (e *DeltaEncoder) Size() int64 {
	return e.size
}

// Count is the number of events encoded so far.
func (e *DeltaEncoder) Count() int {
	return e.count
}

// Close terminates the array and appends the sha256 trailer. It does not close the destination.
func (e *DeltaEncoder) Close() error {
	if e.closed {
		return nil
	}
	e.closed = true
	end := "]"
	if e.count == 0 {
		end = "[]"
	}
	if _, err := io.WriteString(e.json, end); err != nil {
		return fmt.Errorf("delta encoder: terminating array: %w", err)
	}
	if _, err := e.out.Write(e.hash.Sum(nil)); err != nil {
		return fmt.Errorf("delta encoder: writing checksum: %w", err)
	}
	e.size += int64(len(end) + checksumSize)
	return nil
}
