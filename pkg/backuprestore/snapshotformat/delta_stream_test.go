package snapshotformat

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"google.golang.org/protobuf/proto"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
)

// streamAll collects what a DeltaStream yields and its final error.
func streamAll(t *testing.T, stored []byte, snap *snapshot.Snapshot, maxSize int64) ([]*mvccpb.Event, error) {
	t.Helper()
	s, err := OpenDeltaStream(bytes.NewReader(stored), snap, maxSize)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	var out []*mvccpb.Event
	for ev, err := range s.Events() {
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
	return out, nil
}

func TestDeltaStreamYieldsTheWatchedEvents(t *testing.T) {
	ctx := t.Context()
	cli := startEtcd(t)
	before, after := writeWorkload(ctx, t, cli)
	watched := watchEvents(ctx, t, cli, before+1, after)
	for _, c := range []snapshot.Compression{snapshot.CompressionNone, snapshot.CompressionGzip, snapshot.CompressionLZW, snapshot.CompressionZlib} {
		t.Run("compression="+string(c), func(t *testing.T) {
			var stored bytes.Buffer
			writeDelta(t, &stored, c, watched, time.Now())
			got, err := streamAll(t, stored.Bytes(), snapshot.NewIncr(before+1, after, time.Now(), c), 0)
			if err != nil {
				t.Fatalf("streaming: %v", err)
			}
			if len(got) != len(watched) {
				t.Fatalf("streamed %d events, wrote %d", len(got), len(watched))
			}
			for i := range got {
				if !proto.Equal(got[i], (*mvccpb.Event)(watched[i])) {
					t.Fatalf("event %d: got %v, want %v", i, got[i], watched[i])
				}
			}
		})
	}
}

// Events come before the verdict; the verdict on a corrupted object is its corruption, whether the
// flipped byte broke the JSON, changed an event or hit the trailer.
func TestDeltaStreamEndsWithTheCorruption(t *testing.T) {
	ctx := t.Context()
	cli := startEtcd(t)
	before, after := writeWorkload(ctx, t, cli)
	watched := watchEvents(ctx, t, cli, before+1, after)
	var clean bytes.Buffer
	writeDelta(t, &clean, snapshot.CompressionNone, watched, time.Now())
	snap := snapshot.NewIncr(before+1, after, time.Now(), snapshot.CompressionNone)

	for _, pos := range []int{0, 1, clean.Len() / 2, clean.Len() - sha256.Size - 1, clean.Len() - sha256.Size, clean.Len() - 1} {
		corrupted := bytes.Clone(clean.Bytes())
		corrupted[pos] ^= 0x01
		_, err := streamAll(t, corrupted, snap, 0)
		if !errors.Is(err, ErrChecksumMismatch) || !strings.Contains(err.Error(), snap.SnapName) {
			t.Fatalf("flipped byte %d of %d: err = %v; want ErrChecksumMismatch naming %s", pos, clean.Len(), err, snap.SnapName)
		}
	}
	if _, err := streamAll(t, clean.Bytes()[:sha256.Size-1], snap, 0); !errors.Is(err, ErrTruncated) {
		t.Fatalf("truncated delta: err = %v, want ErrTruncated", err)
	}
	if _, err := streamAll(t, clean.Bytes()[:clean.Len()/2], snap, 0); !errors.Is(err, ErrChecksumMismatch) {
		t.Fatalf("delta cut in half: err = %v, want ErrChecksumMismatch", err)
	}
	if _, err := streamAll(t, clean.Bytes(), snap, int64(clean.Len()-1)); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("oversized delta: err = %v, want a size error", err)
	}

	var gz bytes.Buffer
	writeDelta(t, &gz, snapshot.CompressionGzip, watched, time.Now())
	gzSnap := snapshot.NewIncr(before+1, after, time.Now(), snapshot.CompressionGzip)
	for _, pos := range []int{gz.Len() / 2, gz.Len() - 5} {
		corrupted := bytes.Clone(gz.Bytes())
		corrupted[pos] ^= 0x40
		if _, err := streamAll(t, corrupted, gzSnap, 0); err == nil || !strings.Contains(err.Error(), gzSnap.SnapName) {
			t.Fatalf("flipped byte %d of gzip delta: err = %v, want an error naming %s", pos, err, gzSnap.SnapName)
		}
	}
}

// A checksum-valid object that is not a JSON array of events ends its stream with an error naming it.
func TestDeltaStreamWithValidChecksumButBadJSON(t *testing.T) {
	snap := snapshot.NewIncr(2, 3, time.Now(), snapshot.CompressionNone)
	for _, body := range []string{`{}`, `null`, `[{"etcdEvent":{}}]`, `[{"etcdEvent":{"kv":{"key":"aw=="}}},`, `[] x`, `[{"etcdEvent":{"kv":{"key":"!!"}}}]`} {
		sum := sha256.Sum256([]byte(body))
		if _, err := streamAll(t, append([]byte(body), sum[:]...), snap, 0); err == nil || !strings.Contains(err.Error(), snap.SnapName) {
			t.Fatalf("%s: err = %v, want a decoding error naming the object", body, err)
		}
	}
	for _, body := range []string{`[]`, " [ ] \n"} {
		sum := sha256.Sum256([]byte(body))
		if got, err := streamAll(t, append([]byte(body), sum[:]...), snap, 0); err != nil || len(got) != 0 {
			t.Fatalf("%q: %d events, err %v; want none and no error", body, len(got), err)
		}
	}
}
