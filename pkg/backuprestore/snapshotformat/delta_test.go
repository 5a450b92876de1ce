package snapshotformat

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/proto"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
)

func TestDeltaRoundTripWithRealEtcdEvents(t *testing.T) {
	ctx := t.Context()
	cli := startEtcd(t)
	before, after := writeWorkload(ctx, t, cli)
	watched := watchEvents(ctx, t, cli, before+1, after)
	var sawLeased, sawDelete bool
	for _, ev := range watched {
		sawLeased = sawLeased || ev.Kv.Lease != 0
		sawDelete = sawDelete || ev.Type == mvccpb.DELETE
	}
	if !sawLeased || !sawDelete {
		t.Fatalf("workload did not produce lease-attached and delete events: %v", watched)
	}

	for _, c := range []snapshot.Compression{snapshot.CompressionNone, snapshot.CompressionGzip, snapshot.CompressionLZW, snapshot.CompressionZlib} {
		t.Run("compression="+string(c), func(t *testing.T) {
			snap := snapshot.NewIncr(before+1, after, time.Now(), c)
			var stored bytes.Buffer
			observed := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
			writeDelta(t, &stored, c, watched, observed)

			delta, err := OpenDelta(bytes.NewReader(stored.Bytes()), snap, 0)
			if err != nil {
				t.Fatalf("OpenDelta: %v", err)
			}
			got, err := delta.All()
			if err != nil {
				t.Fatalf("decoding: %v", err)
			}
			if len(got) != len(watched) {
				t.Fatalf("decoded %d events, wrote %d", len(got), len(watched))
			}
			for i := range got {
				if !proto.Equal(got[i].EtcdEvent, (*mvccpb.Event)(watched[i])) {
					t.Fatalf("event %d: got %v, want %v", i, got[i].EtcdEvent, watched[i])
				}
				if !got[i].Time.Equal(observed) {
					t.Fatalf("event %d: time %v, want %v", i, got[i].Time, observed)
				}
			}
		})
	}
}

func writeDelta(t *testing.T, dst *bytes.Buffer, c snapshot.Compression, events []*clientv3.Event, observed time.Time) {
	t.Helper()
	zw, err := snapshot.NewCompressor(dst, c)
	if err != nil {
		t.Fatal(err)
	}
	enc := NewDeltaEncoder(zw)
	for _, ev := range events {
		if err := enc.Encode((*mvccpb.Event)(ev), observed); err != nil {
			t.Fatal(err)
		}
	}
	if enc.Count() != len(events) {
		t.Fatalf("Count = %d, want %d", enc.Count(), len(events))
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestDeltaFieldNamesOnTheWire(t *testing.T) {
	var buf bytes.Buffer
	enc := NewDeltaEncoder(&buf)
	ev := &mvccpb.Event{Type: mvccpb.PUT, Kv: &mvccpb.KeyValue{Key: []byte("k"), CreateRevision: 2, ModRevision: 3, Version: 2, Value: []byte("v"), Lease: 9}}
	if err := enc.Encode(ev, time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	_ = enc.Close()
	text := string(buf.Bytes()[:buf.Len()-sha256.Size])
	for _, want := range []string{`"etcdEvent":{`, `"kv":{`, `"key":"aw=="`, `"create_revision":2`, `"mod_revision":3`, `"version":2`, `"value":"dg=="`, `"lease":9`, `"time":"2024-01-02T03:04:05Z"`} {
		if !strings.Contains(text, want) {
			t.Fatalf("delta JSON %s lacks %s", text, want)
		}
	}
}

func TestDeltaCorruptionIsDetectedBeforeAnyEvent(t *testing.T) {
	ctx := t.Context()
	cli := startEtcd(t)
	before, after := writeWorkload(ctx, t, cli)
	watched := watchEvents(ctx, t, cli, before+1, after)
	var clean bytes.Buffer
	writeDelta(t, &clean, snapshot.CompressionNone, watched, time.Now())
	snap := snapshot.NewIncr(before+1, after, time.Now(), snapshot.CompressionNone)

	positions := []int{0, 1, clean.Len() / 2, clean.Len() - sha256.Size - 1, clean.Len() - sha256.Size, clean.Len() - 1}
	for _, pos := range positions {
		corrupted := bytes.Clone(clean.Bytes())
		corrupted[pos] ^= 0x01
		delta, err := OpenDelta(bytes.NewReader(corrupted), snap, 0)
		if !errors.Is(err, ErrChecksumMismatch) {
			t.Fatalf("flipped byte %d of %d: err = %v, delta = %v; want ErrChecksumMismatch", pos, clean.Len(), err, delta)
		}
		if !strings.Contains(err.Error(), snap.SnapName) {
			t.Fatalf("error %q does not name the object %s", err, snap.SnapName)
		}
	}
	if _, err := OpenDelta(bytes.NewReader(clean.Bytes()[:sha256.Size-1]), snap, 0); !errors.Is(err, ErrTruncated) {
		t.Fatalf("truncated delta: err = %v, want ErrTruncated", err)
	}
	if _, err := OpenDelta(bytes.NewReader(clean.Bytes()), snap, int64(clean.Len()-1)); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("oversized delta: err = %v, want a size error", err)
	}

	// A flipped byte inside a compressed object is caught by the codec or the checksum, named either way.
	var gz bytes.Buffer
	writeDelta(t, &gz, snapshot.CompressionGzip, watched, time.Now())
	gzSnap := snapshot.NewIncr(before+1, after, time.Now(), snapshot.CompressionGzip)
	for _, pos := range []int{gz.Len() / 2, gz.Len() - 5} {
		corrupted := bytes.Clone(gz.Bytes())
		corrupted[pos] ^= 0x40
		_, err := OpenDelta(bytes.NewReader(corrupted), gzSnap, 0)
		if err == nil || !strings.Contains(err.Error(), gzSnap.SnapName) {
			t.Fatalf("flipped byte %d of gzip delta: err = %v, want an error naming %s", pos, err, gzSnap.SnapName)
		}
	}
}

// A checksum-valid object that is not a JSON array of events is still refused, not half applied.
func TestDeltaWithValidChecksumButBadJSON(t *testing.T) {
	for _, body := range []string{`{}`, `[{"etcdEvent":{}}]`, `[{"etcdEvent":{"kv":{"key":"aw=="}}},`} {
		sum := sha256.Sum256([]byte(body))
		d, err := ReadDelta(bytes.NewReader(append([]byte(body), sum[:]...)), "obj", 0)
		if err != nil {
			t.Fatalf("%s: checksum should match: %v", body, err)
		}
		if _, err := d.All(); err == nil || !strings.Contains(err.Error(), "obj") {
			t.Fatalf("%s: err = %v, want a decoding error naming the object", body, err)
		}
	}
}
