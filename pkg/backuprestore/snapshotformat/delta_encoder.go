package snapshotformat

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"io"
	"strconv"
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

// encoderFlushSize is how much encoded JSON the encoder collects before it hands it to the destination
// and the hash: one write per few hundred events instead of two per event, each of which costs the
// compressor a call of its own.
const encoderFlushSize = 32 << 10

// DeltaEncoder writes a delta snapshot one event at a time, so the snapshotter never needs a second
// copy of a delta in memory: the JSON is hashed while it is written and the checksum appended on
// Close. The output is byte-for-byte what encoding/json produces for the whole []Event at once; the
// encoder appends that JSON itself (appendEvent) because the delta watch encodes every revision etcd
// commits, on the same CPUs as the etcd member it backs up, and reflection cost about a tenth of the
// snapshotter's CPU there.
type DeltaEncoder struct {
	out    io.Writer // the destination, receives JSON and trailer
	hash   hash.Hash
	buf    []byte // encoded JSON not handed to out and hash yet
	err    error  // the first failed write; every later call returns it
	size   int64  // bytes encoded, trailer included once closed
	count  int
	closed bool
}

// NewDeltaEncoder starts a delta snapshot written to w (typically a compressor in front of an upload).
func NewDeltaEncoder(w io.Writer) *DeltaEncoder {
	return &DeltaEncoder{out: w, hash: sha256.New(), buf: make([]byte, 0, encoderFlushSize+1024)}
}

// Encode appends one event. It may keep the event in its buffer until a later call: a failed write
// shows on the next Encode or on Close.
func (e *DeltaEncoder) Encode(ev *mvccpb.Event, observed time.Time) error {
	if e.closed {
		return errors.New("delta encoder: encode after close")
	}
	if e.err != nil {
		return e.err
	}
	separator := byte(',')
	if e.count == 0 {
		separator = '['
	}
	start := len(e.buf)
	buf, err := appendEvent(append(e.buf, separator), ev, observed)
	if err != nil {
		e.buf = e.buf[:start]
		return fmt.Errorf("delta encoder: marshalling event %d: %w", e.count, err)
	}
	e.buf = buf
	e.size += int64(len(e.buf) - start)
	e.count++
	if len(e.buf) >= encoderFlushSize {
		return e.flush()
	}
	return nil
}

// flush hands the buffered JSON to the destination and the hash.
func (e *DeltaEncoder) flush() error {
	if e.err != nil || len(e.buf) == 0 {
		return e.err
	}
	e.hash.Write(e.buf) // a hash.Hash never fails
	if _, err := e.out.Write(e.buf); err != nil {
		e.err = fmt.Errorf("delta encoder: writing up to event %d: %w", e.count, err)
	}
	e.buf = e.buf[:0]
	return e.err
}

// Size is the number of bytes encoded so far: the delta's uncompressed size, trailer included, once
// closed.
func (e *DeltaEncoder) Size() int64 {
	return e.size
}

// Count is the number of events encoded so far.
func (e *DeltaEncoder) Count() int {
	return e.count
}

// Close terminates the array, writes what is buffered and appends the sha256 trailer. It does not close
// the destination.
func (e *DeltaEncoder) Close() error {
	if e.closed {
		return e.err
	}
	e.closed = true
	end := "]"
	if e.count == 0 {
		end = "[]"
	}
	e.buf = append(e.buf, end...)
	e.size += int64(len(end))
	if err := e.flush(); err != nil {
		return err
	}
	if _, err := e.out.Write(e.hash.Sum(nil)); err != nil {
		e.err = fmt.Errorf("delta encoder: writing checksum: %w", err)
		return e.err
	}
	e.size += checksumSize
	return nil
}

// appendEvent appends what encoding/json writes for Event{ev, observed}: the fields in declaration
// order, those tagged omitempty left out when zero, bytes in standard base64, the time as
// time.Time.MarshalJSON writes it (which refuses years outside 0–9999).
func appendEvent(b []byte, ev *mvccpb.Event, observed time.Time) ([]byte, error) {
	b = append(b, `{"etcdEvent":`...)
	if ev == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '{')
		fields := 0
		if ev.Type != 0 {
			b = appendFieldName(b, &fields, "type")
			b = strconv.AppendInt(b, int64(ev.Type), 10)
		}
		if ev.Kv != nil {
			b = appendKeyValue(appendFieldName(b, &fields, "kv"), ev.Kv)
		}
		if ev.PrevKv != nil {
			b = appendKeyValue(appendFieldName(b, &fields, "prev_kv"), ev.PrevKv)
		}
		b = append(b, '}')
	}
	b = append(b, `,"time":"`...)
	b, err := observed.AppendText(b)
	if err != nil {
		return nil, fmt.Errorf("observed time: %w", err)
	}
	return append(b, `"}`...), nil
}

func appendKeyValue(b []byte, kv *mvccpb.KeyValue) []byte {
	b = append(b, '{')
	fields := 0
	if len(kv.Key) > 0 {
		b = appendBytes(appendFieldName(b, &fields, "key"), kv.Key)
	}
	b = appendInt(b, &fields, "create_revision", kv.CreateRevision)
	b = appendInt(b, &fields, "mod_revision", kv.ModRevision)
	b = appendInt(b, &fields, "version", kv.Version)
	if len(kv.Value) > 0 {
		b = appendBytes(appendFieldName(b, &fields, "value"), kv.Value)
	}
	b = appendInt(b, &fields, "lease", kv.Lease)
	return append(b, '}')
}

// appendFieldName appends `"name":`, after a comma unless it is the object's first field.
func appendFieldName(b []byte, fields *int, name string) []byte {
	if *fields > 0 {
		b = append(b, ',')
	}
	*fields++
	b = append(b, '"')
	b = append(b, name...)
	return append(b, '"', ':')
}

// appendInt appends an omitempty integer field.
func appendInt(b []byte, fields *int, name string, v int64) []byte {
	if v == 0 {
		return b
	}
	return strconv.AppendInt(appendFieldName(b, fields, name), v, 10)
}

func appendBytes(b, v []byte) []byte {
	b = append(b, '"')
	b = base64.StdEncoding.AppendEncode(b, v)
	return append(b, '"')
}
