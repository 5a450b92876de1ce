package snapstore

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"io"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
)

// largeObjectSize is the size of the streamed object: large against the upload buffers (5 MiB × 2 in
// flight, up to four parts alive at once while one is read and another waits: about 20 MiB), and smaller
// under -short, where half of it (the heap growth allowed) still sits above those buffers.
func largeObjectSize() int64 {
	if testing.Short() {
		return 48 << 20
	}
	return 64 << 20
}

// newGenerator is a deterministic, allocation-free stream of pseudo-random bytes.
func newGenerator(seed byte) io.Reader {
	return rand.NewChaCha8([32]byte{seed})
}

// heapSampler records the peak of live heap objects while an operation runs, to prove an upload
// streams: a copy of the object anywhere in memory would show up as growth of its size.
type heapSampler struct {
	peak atomic.Uint64
	stop chan struct{}
	done chan struct{}
}

const heapMetric = "/memory/classes/heap/objects:bytes"

func heapObjects() uint64 {
	s := []metrics.Sample{{Name: heapMetric}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func startHeapSampler() *heapSampler {
	h := &heapSampler{stop: make(chan struct{}), done: make(chan struct{})}
	h.peak.Store(heapObjects())
	go func() {
		defer close(h.done)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			if v := heapObjects(); v > h.peak.Load() {
				h.peak.Store(v)
			}
			select {
			case <-h.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return h
}

func (h *heapSampler) Stop() uint64 {
	close(h.stop)
	<-h.done
	return h.peak.Load()
}

func testLargeObject(t *testing.T, h harness) {
	upload := UploadOptions{ChunkSize: 5 << 20, MaxParallelChunks: 2}
	store := h.open(t, "large/etcd-main", upload)
	largeObjectSize := cmp.Or(h.largeObjectSize, largeObjectSize())
	snap := snapshot.NewFull(123456, time.Unix(1700000000, 0), snapshot.CompressionNone, false)

	// A low GC target makes the heap metric track live memory closely instead of uncollected garbage.
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	runtime.GC()
	baseline := heapObjects()
	hashed := sha256.New()
	src := io.TeeReader(io.LimitReader(newGenerator(42), largeObjectSize), hashed)
	sampler := startHeapSampler()
	start := time.Now()
	err := store.Save(t.Context(), snap, src)
	elapsed := time.Since(start)
	peak := sampler.Stop()
	if err != nil {
		t.Fatalf("Save of %d MiB: %v", largeObjectSize>>20, err)
	}
	growth := int64(peak) - int64(baseline)
	t.Logf("saved %d MiB in %s (%.0f MiB/s), peak heap growth %.1f MiB (chunk %d MiB × %d parallel)",
		largeObjectSize>>20, elapsed.Round(time.Millisecond), float64(largeObjectSize>>20)/elapsed.Seconds(),
		float64(growth)/(1<<20), upload.ChunkSize>>20, upload.MaxParallelChunks)
	if limit := largeObjectSize / 2; growth > limit {
		t.Fatalf("peak heap grew by %d bytes while saving %d bytes (limit %d): the upload is not streamed", growth, largeObjectSize, limit)
	}
	if h.assertChunked != nil {
		h.assertChunked(t, store, snap.Key("large/etcd-main"))
	}

	rc, err := store.Fetch(t.Context(), snap)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	fetched := sha256.New()
	n, err := io.Copy(fetched, rc)
	if err != nil {
		t.Fatalf("reading back: %v", err)
	}
	if n != largeObjectSize || !bytes.Equal(fetched.Sum(nil), hashed.Sum(nil)) {
		t.Fatalf("fetched %d bytes with sha256 %x, saved %d bytes with %x", n, fetched.Sum(nil), largeObjectSize, hashed.Sum(nil))
	}
}
