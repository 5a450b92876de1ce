package snapshotformat

import (
	"errors"
	"fmt"
	"io"

	jsoniter "github.com/json-iterator/go"
	"go.etcd.io/etcd/api/v3/mvccpb"
)

// eventJSON decodes like encoding/json (same field matching, base64 for bytes) without its
// reflection on every value: a delta holds hundreds of thousands of events, and decoding them is most
// of the work of a restore besides the database writes.
var eventJSON = jsoniter.ConfigCompatibleWithStandardLibrary

// watchEventOnly is an Event without the observation time, which a replay does not need: its value
// is skipped, not parsed.
type watchEventOnly struct {
	EtcdEvent *mvccpb.Event `json:"etcdEvent"`
}

// eventDecoder decodes the JSON array of a delta snapshot one event at a time from a reader, with a
// fixed buffer.
type eventDecoder struct {
	it *jsoniter.Iterator
}

func newEventDecoder(in io.Reader, buffer int) *eventDecoder {
	return &eventDecoder{it: jsoniter.Parse(eventJSON, in, buffer)}
}

// start checks that an array follows.
func (d *eventDecoder) start() error {
	if t := d.it.WhatIsNext(); t != jsoniter.ArrayValue {
		return d.err(fmt.Errorf("want an array of events, found a JSON value of type %d", t))
	}
	return nil
}

// next decodes the next event's watch event; nil once the closing bracket is consumed.
func (d *eventDecoder) next() (*mvccpb.Event, error) {
	if !d.it.ReadArray() {
		return nil, d.err(nil)
	}
	var ev watchEventOnly
	d.it.ReadVal(&ev)
	return ev.EtcdEvent, d.err(nil)
}

// errTrailingData reports bytes other than white space after the array of events.
var errTrailingData = errors.New("data after the array of events")

// finish reads to the end of the input, which must hold nothing but white space after the array. A
// failing reader's error (the checksum verdict) is returned as it is.
func (d *eventDecoder) finish() error {
	d.it.WhatIsNext() // skips white space; sets the error at the end of the input
	switch {
	case d.it.Error == nil: // a byte follows
		return errTrailingData
	case errors.Is(d.it.Error, io.EOF):
		return nil
	default:
		return d.it.Error
	}
}

// err is the iterator's error if it has one (a read error takes precedence), else fallback.
func (d *eventDecoder) err(fallback error) error {
	if d.it.Error != nil && !errors.Is(d.it.Error, io.EOF) {
		return d.it.Error
	}
	if d.it.Error != nil && fallback == nil {
		return io.ErrUnexpectedEOF
	}
	return fallback
}
