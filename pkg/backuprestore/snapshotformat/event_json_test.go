package snapshotformat

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
)

// randomKeyValue is nil or a KeyValue whose fields are each zero (omitted in JSON) or not, with bytes
// that need every base64 padding and characters JSON would escape in a string.
func randomKeyValue(rng *rand.Rand) *mvccpb.KeyValue {
	if rng.IntN(4) == 0 {
		return nil
	}
	bytesOf := func() []byte {
		switch rng.IntN(4) {
		case 0:
			return nil
		case 1:
			return []byte{}
		}
		b := make([]byte, rng.IntN(300))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		if len(b) > 0 && rng.IntN(2) == 0 {
			copy(b, `<&>"\`+"\u2028")
		}
		return b
	}
	number := func() int64 {
		switch rng.IntN(3) {
		case 0:
			return 0
		case 1:
			return -rng.Int64()
		}
		return rng.Int64()
	}
	return &mvccpb.KeyValue{Key: bytesOf(), CreateRevision: number(), ModRevision: number(), Version: number(), Value: bytesOf(), Lease: number()}
}

// The hand-written event JSON is byte for byte encoding/json's, the format existing deltas were written
// in, for any combination of present and absent fields, any bytes and any time zone.
func TestEventJSONMatchesEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	zones := []*time.Location{time.UTC, time.FixedZone("east", 5*3600+30*60), time.FixedZone("west", -8*3600), time.Local}
	for i := range 5000 {
		var ev *mvccpb.Event
		if i%50 != 0 {
			ev = &mvccpb.Event{Type: mvccpb.Event_EventType(rng.IntN(2)), Kv: randomKeyValue(rng), PrevKv: randomKeyValue(rng)}
		}
		observed := time.Unix(rng.Int64N(4e9), rng.Int64N(1e9)*int64(rng.IntN(2))).In(zones[rng.IntN(len(zones))])
		want, err := json.Marshal(Event{EtcdEvent: ev, Time: observed})
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendEventJSON([]byte("prefix"), ev, observed)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, append([]byte("prefix"), want...)) {
			t.Fatalf("event %v at %v:\n got %s\nwant prefix%s", ev, observed, got, want)
		}
	}
}

// A time encoding/json refuses (a year beyond 9999) is refused here too, naming the event.
func TestDeltaEncoderRefusesTimesJSONCannotHold(t *testing.T) {
	enc := NewDeltaEncoder(io.Discard)
	ev := &mvccpb.Event{Kv: &mvccpb.KeyValue{Key: []byte("k"), ModRevision: 2}}
	if _, err := json.Marshal(Event{EtcdEvent: ev, Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}); err == nil {
		t.Fatal("encoding/json accepts the year 10000; the test's premise is gone")
	}
	err := enc.Encode(ev, time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC))
	if err == nil || !strings.Contains(err.Error(), "event 0") {
		t.Fatalf("Encode of a time in the year 10000: %v, want an error naming event 0", err)
	}
}

// Encoding an event allocates nothing once the encoder's buffer has grown: a delta of a busy etcd
// holds hundreds of thousands of them. Allocations are counted, not time.
func TestDeltaEncoderAllocatesNothingPerEvent(t *testing.T) {
	enc := NewDeltaEncoder(io.Discard)
	ev := &mvccpb.Event{Kv: &mvccpb.KeyValue{Key: []byte("/registry/pods/ns/name"), Value: make([]byte, 256), CreateRevision: 5, ModRevision: 9, Version: 3}}
	now := time.Now()
	if allocs := testing.AllocsPerRun(1000, func() { _ = enc.Encode(ev, now) }); allocs > 0 {
		t.Fatalf("%.1f allocations per event", allocs)
	}
}
