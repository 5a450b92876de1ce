package snapshotformat

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
)

// variedEvents covers every shape encoding/json distinguishes in an Event: each field zero and non-zero
// (omitempty), nil and empty keys and values, a missing kv, a prev_kv, a missing event, negative and extreme integers,
// bytes that need base64 padding, and times with nanoseconds and in other zones.
func variedEvents(rng *rand.Rand, n int) []Event {
	ints := []int64{0, 1, -1, 7, math.MaxInt64, math.MinInt64, 1 << 40}
	bytesOf := func() []byte {
		switch rng.IntN(4) {
		case 0:
			return nil
		case 1:
			return []byte{}
		}
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		return b
	}
	kv := func() *mvccpb.KeyValue {
		if rng.IntN(5) == 0 {
			return nil
		}
		return &mvccpb.KeyValue{Key: bytesOf(), Value: bytesOf(), CreateRevision: ints[rng.IntN(len(ints))],
			ModRevision: ints[rng.IntN(len(ints))], Version: ints[rng.IntN(len(ints))], Lease: ints[rng.IntN(len(ints))]}
	}
	zones := []*time.Location{time.UTC, time.FixedZone("", -7*3600-30*60), time.FixedZone("X", 14*3600)}
	events := make([]Event, n)
	for i := range events {
		ev := &mvccpb.Event{Type: mvccpb.Event_EventType(rng.IntN(3)), Kv: kv()}
		if rng.IntN(3) == 0 {
			ev.PrevKv = kv()
		}
		if rng.IntN(50) == 0 {
			ev = nil
		}
		observed := time.Unix(rng.Int64N(4e9), rng.Int64N(1e9)*int64(rng.IntN(2))).In(zones[rng.IntN(len(zones))])
		events[i] = Event{EtcdEvent: ev, Time: observed}
	}
	return events
}

// The hand-written JSON must be what encoding/json writes for the same array (the format existing
// backups were written in), event for event, at every length (the encoder buffers and flushes in
// chunks), followed by the sha256 of those bytes.
func TestDeltaEncoderWritesWhatEncodingJSONWrites(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	events := variedEvents(rng, 3000)
	for _, n := range []int{0, 1, 2, 17, 3000} {
		var buf bytes.Buffer
		enc := NewDeltaEncoder(&buf)
		for _, ev := range events[:n] {
			if err := enc.Encode(ev.EtcdEvent, ev.Time); err != nil {
				t.Fatal(err)
			}
		}
		if err := enc.Close(); err != nil {
			t.Fatal(err)
		}
		whole, err := json.Marshal(append([]Event{}, events[:n]...)) // an empty array, not null, for none
		if err != nil {
			t.Fatal(err)
		}
		got := buf.Bytes()
		if len(got) < sha256.Size || !bytes.Equal(got[:len(got)-sha256.Size], whole) {
			for i, ev := range events[:n] {
				one, _ := json.Marshal(ev)
				mine, _ := appendEvent(nil, ev.EtcdEvent, ev.Time)
				if !bytes.Equal(one, mine) {
					t.Fatalf("%d events: event %d encoded as\n%s\nencoding/json writes\n%s", n, i, mine, one)
				}
			}
			t.Fatalf("%d events: the array differs from encoding/json's", n)
		}
		if sum := sha256.Sum256(whole); !bytes.Equal(got[len(got)-sha256.Size:], sum[:]) {
			t.Fatalf("%d events: trailer is not the sha256 of the JSON", n)
		}
		if enc.Size() != int64(len(got)) || enc.Count() != n {
			t.Fatalf("%d events: Size() %d Count() %d, wrote %d bytes", n, enc.Size(), enc.Count(), len(got))
		}
	}
}

func TestDeltaEncoderRefusesAnEventAfterClose(t *testing.T) {
	enc := NewDeltaEncoder(io.Discard)
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	if err := enc.Encode(&mvccpb.Event{Kv: &mvccpb.KeyValue{Key: []byte("k"), ModRevision: 2}}, time.Now()); err == nil {
		t.Fatal("Encode after Close: want an error")
	}
}

// A time encoding/json refuses is refused, and the event is not half written.
func TestDeltaEncoderRefusesATimeJSONCannotWrite(t *testing.T) {
	var buf bytes.Buffer
	enc := NewDeltaEncoder(&buf)
	ev := &mvccpb.Event{Kv: &mvccpb.KeyValue{Key: []byte("k"), ModRevision: 2}}
	if err := enc.Encode(ev, time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)); err == nil {
		t.Fatal("encoding an event observed in year 10000: want an error")
	}
	if _, err := json.Marshal(Event{EtcdEvent: ev, Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}); err == nil {
		t.Fatal("encoding/json accepts year 10000 now; the encoder must follow")
	}
	observed := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := enc.Encode(ev, observed); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	whole, _ := json.Marshal([]Event{{EtcdEvent: ev, Time: observed}})
	if got := buf.Bytes()[:buf.Len()-sha256.Size]; !bytes.Equal(got, whole) {
		t.Fatalf("after a refused event the delta is\n%s\nwant\n%s", got, whole)
	}
}

type failingWriter struct{ err error }

func (w failingWriter) Write([]byte) (int, error) { return 0, w.err }

// A destination that fails makes Encode (once the buffer is handed over) or Close fail, and every call
// after that.
func TestDeltaEncoderReportsAFailedWrite(t *testing.T) {
	broken := errors.New("upload broke")
	enc := NewDeltaEncoder(failingWriter{broken})
	value := bytes.Repeat([]byte("v"), 1024)
	var err error
	for i := 0; err == nil && i < 1000; i++ {
		err = enc.Encode(&mvccpb.Event{Kv: &mvccpb.KeyValue{Key: []byte("k"), Value: value, ModRevision: int64(i + 2)}}, time.Now())
	}
	if !errors.Is(err, broken) {
		t.Fatalf("Encode into a failing writer: %v, want %v", err, broken)
	}
	if err := enc.Close(); !errors.Is(err, broken) {
		t.Fatalf("Close after a failed write: %v, want %v", err, broken)
	}

	small := NewDeltaEncoder(failingWriter{broken})
	if err := small.Encode(&mvccpb.Event{Kv: &mvccpb.KeyValue{Key: []byte("k"), ModRevision: 2}}, time.Now()); err != nil {
		t.Fatalf("one small event is buffered, not written: %v", err)
	}
	if err := small.Close(); !errors.Is(err, broken) {
		t.Fatalf("Close into a failing writer: %v, want %v", err, broken)
	}
}

// BenchmarkDeltaEncoder encodes events of the delta benchmark's shape (256-byte values) and reports the
// time per event against the encoder's former way, json.Marshal per event, measured in the same run: five
// alternating rounds of each, the median reported.
func BenchmarkDeltaEncoder(b *testing.B) {
	events := make([]Event, 1000)
	observed := time.Now()
	for i := range events {
		events[i] = Event{Time: observed, EtcdEvent: &mvccpb.Event{Kv: &mvccpb.KeyValue{
			Key: []byte("/registry/bench/key-" + string(rune('a'+i%26))), Value: bytes.Repeat([]byte{byte(i)}, 256),
			CreateRevision: int64(i + 2), ModRevision: int64(i + 1000), Version: int64(i%9 + 1)}}}
	}
	// jsonMarshal is how the encoder worked before: json.Marshal per event, and the separator and the
	// event written to the destination and the hash each.
	jsonMarshal := func() {
		w := io.MultiWriter(io.Discard, sha256.New())
		for _, ev := range events {
			data, err := json.Marshal(ev)
			if err != nil {
				b.Fatal(err)
			}
			_, _ = w.Write([]byte{','})
			_, _ = w.Write(data)
		}
	}
	encoder := func() {
		enc := NewDeltaEncoder(io.Discard)
		for _, ev := range events {
			if err := enc.Encode(ev.EtcdEvent, ev.Time); err != nil {
				b.Fatal(err)
			}
		}
		if err := enc.Close(); err != nil {
			b.Fatal(err)
		}
	}
	const repeats = 200
	perEvent := func(encode func()) float64 {
		start := time.Now()
		for range repeats {
			encode()
		}
		return float64(time.Since(start).Nanoseconds()) / float64(repeats*len(events))
	}
	var ours, former []float64
	for b.Loop() {
		for range 5 {
			former = append(former, perEvent(jsonMarshal))
			ours = append(ours, perEvent(encoder))
		}
	}
	slices.Sort(ours)
	slices.Sort(former)
	oursMedian, formerMedian := ours[len(ours)/2], former[len(former)/2]
	b.ReportMetric(oursMedian, "ns/event")
	b.ReportMetric(formerMedian, "json-marshal-ns/event")
	b.ReportMetric(oursMedian/formerMedian, "x-json-marshal")
	b.ReportMetric(testing.AllocsPerRun(10, encoder)/float64(len(events)), "allocs/event")
}
