package snapshot

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"
)

// TestParallelGzipIsStandardGzip checks the parallel codec's output with the standard library's reader
// (not the codec's own), over several blocks and a partial last block.
func TestParallelGzipIsStandardGzip(t *testing.T) {
	payload := make([]byte, 5*parallelBlockSize+12345)
	rng := rand.NewChaCha8([32]byte{2})
	for i := 0; i < len(payload); i += 64 << 10 {
		if i/(64<<10)%2 == 0 {
			_, _ = rng.Read(payload[i:min(i+64<<10, len(payload))]) // alternate random and zero runs
		}
	}
	var buf bytes.Buffer
	w, err := NewParallelCompressor(&buf, CompressionGzip)
	if err != nil {
		t.Fatal(err)
	}
	for rest := payload; len(rest) > 0; {
		n := min(len(rest), 300_000) // writes that straddle block boundaries
		if _, err := w.Write(rest[:n]); err != nil {
			t.Fatal(err)
		}
		rest = rest[n:]
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if buf.Len() >= len(payload)*3/4 {
		t.Fatalf("did not compress: %d bytes from %d", buf.Len(), len(payload))
	}
	zr, err := gzip.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	zr.Multistream(false) // one gzip member, as a single-stream reader expects
	got, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, payload) {
		t.Fatal("round trip through compress/gzip changed the payload")
	}
	if rest, _ := io.ReadAll(&buf); len(rest) != 0 {
		t.Fatalf("%d bytes after the gzip member", len(rest))
	}
}

func TestParallelCompressorOtherCodecsAreSerial(t *testing.T) {
	w, err := NewParallelCompressor(io.Discard, CompressionZlib)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := w.(*parallelGzip); ok {
		t.Fatal("zlib got the parallel gzip codec")
	}
}

// failingWriter accepts limit bytes and then fails.
type failingWriter struct{ limit int }

var errDestination = errors.New("destination failed")

func (f *failingWriter) Write(p []byte) (int, error) {
	if len(p) > f.limit {
		return 0, errDestination
	}
	f.limit -= len(p)
	return len(p), nil
}

// TestParallelGzipFailureReleasesGoroutines: a failing destination is reported by Close at the latest,
// later writes fail too, and no goroutine of the codec is left behind.
func TestParallelGzipFailureReleasesGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	w, err := NewParallelCompressor(&failingWriter{limit: 100}, CompressionGzip)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, parallelBlockSize)
	_, _ = rand.NewChaCha8([32]byte{3}).Read(chunk)
	var writeErr error
	for range 3 * parallelBlocks {
		if _, writeErr = w.Write(chunk); writeErr != nil {
			break
		}
	}
	closeErr := w.Close()
	if !errors.Is(closeErr, errDestination) || (writeErr != nil && !errors.Is(writeErr, errDestination)) {
		t.Fatalf("Write error %v, Close error %v; want %v", writeErr, closeErr, errDestination)
	}
	if _, err := w.Write(chunk); err == nil {
		t.Fatal("Write after a failure succeeded")
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines left running, %d before", runtime.NumGoroutine(), before)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The read-ahead decompressor returns what was compressed, for every codec, with blocks smaller than
// the stream; a corrupted gzip stream fails a read.
func TestReadAheadDecompressorRoundTrip(t *testing.T) {
	payload := make([]byte, 3<<20)
	_, _ = rand.NewChaCha8([32]byte{2}).Read(payload[:len(payload)/2])
	for _, c := range []Compression{CompressionNone, CompressionGzip, CompressionLZW, CompressionZlib} {
		var buf bytes.Buffer
		w, err := NewCompressor(&buf, c)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(payload); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		stored := bytes.Clone(buf.Bytes())
		r, err := NewReadAheadDecompressor(bytes.NewReader(stored), c, 64<<10, 3)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		if err != nil || !bytes.Equal(got, payload) {
			t.Fatalf("%s: read %d bytes (%v), want the %d-byte payload", c, len(got), err, len(payload))
		}
		if err := r.Close(); err != nil {
			t.Fatalf("%s: Close: %v", c, err)
		}
		if c != CompressionGzip {
			continue
		}
		stored[len(stored)/2] ^= 0x40
		r, err = NewReadAheadDecompressor(bytes.NewReader(stored), c, 64<<10, 3)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := io.ReadAll(r); err == nil && bytes.Equal(got, payload) {
			t.Fatal("a corrupted gzip stream decompressed to the payload without an error")
		} else if err == nil {
			t.Fatal("a corrupted gzip stream read without an error")
		}
		_ = r.Close()
	}
}
