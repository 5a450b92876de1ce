package snapshotformat

import (
	"encoding/base64"
	"strconv"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
)

// appendEventJSON appends the JSON of Event{EtcdEvent: ev, Time: observed} to b byte for byte as
// encoding/json marshals it (field order, omitempty, base64 for bytes, RFC 3339 time), the format
// existing backups were written in. A delta snapshot encodes every watched event, and json.Marshal's
// reflection and four allocations per event were most of the encoder's time.
func appendEventJSON(b []byte, ev *mvccpb.Event, observed time.Time) ([]byte, error) {
	b = append(b, `{"etcdEvent":`...)
	if ev == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '{')
		sep := byte(0)
		if ev.Type != 0 {
			b, sep = appendName(b, sep, "type"), ','
			b = strconv.AppendInt(b, int64(ev.Type), 10)
		}
		if ev.Kv != nil {
			b, sep = appendName(b, sep, "kv"), ','
			b = appendKeyValueJSON(b, ev.Kv)
		}
		if ev.PrevKv != nil {
			b = appendName(b, sep, "prev_kv")
			b = appendKeyValueJSON(b, ev.PrevKv)
		}
		b = append(b, '}')
	}
	b = append(b, `,"time":"`...)
	b, err := observed.AppendText(b) // what Time.MarshalJSON writes between its quotes
	if err != nil {
		return nil, err
	}
	return append(b, `"}`...), nil
}

func appendKeyValueJSON(b []byte, kv *mvccpb.KeyValue) []byte {
	b = append(b, '{')
	sep := byte(0)
	if len(kv.Key) > 0 {
		b, sep = appendName(b, sep, "key"), ','
		b = appendBase64(b, kv.Key)
	}
	for _, f := range [...]struct {
		name string
		v    int64
	}{{"create_revision", kv.CreateRevision}, {"mod_revision", kv.ModRevision}, {"version", kv.Version}} {
		if f.v != 0 {
			b, sep = appendName(b, sep, f.name), ','
			b = strconv.AppendInt(b, f.v, 10)
		}
	}
	if len(kv.Value) > 0 {
		b, sep = appendName(b, sep, "value"), ','
		b = appendBase64(b, kv.Value)
	}
	if kv.Lease != 0 {
		b = appendName(b, sep, "lease")
		b = strconv.AppendInt(b, kv.Lease, 10)
	}
	return append(b, '}')
}

// appendName appends sep (none before the first field) and "name":.
func appendName(b []byte, sep byte, name string) []byte {
	if sep != 0 {
		b = append(b, sep)
	}
	b = append(b, '"')
	b = append(b, name...)
	return append(b, '"', ':')
}

// appendBase64 appends data as encoding/json writes a []byte: a string of standard, padded base64.
func appendBase64(b, data []byte) []byte {
	b = append(b, '"')
	b = base64.StdEncoding.AppendEncode(b, data)
	return append(b, '"')
}
