package snapshotter

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"errors"
	"io"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
)

// waitGoroutines fails unless the goroutine count drops back to before within a few seconds.
func waitGoroutines(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines left running, %d before", runtime.NumGoroutine(), before)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestCompressStreamDeliversEveryByteToScannerAndStore(t *testing.T) {
	input := make([]byte, 3*pipelineChunkSize+pipelineChunkSize/3)
	_, _ = rand.NewChaCha8([32]byte{4}).Read(input[:len(input)/2])
	before := runtime.NumGoroutine()
	var stored bytes.Buffer
	scanned := sha256.New()
	// Irregular reads: the source returns at most 10 000 bytes per call.
	src := &shortReader{r: bytes.NewReader(input), max: 10_000}
	if err := compressStream(&stored, src, scanned, snapshot.CompressionGzip); err != nil {
		t.Fatal(err)
	}
	if want := sha256.Sum256(input); !bytes.Equal(scanned.Sum(nil), want[:]) {
		t.Fatal("the scanner did not see the stream as it was")
	}
	zr, err := gzip.NewReader(&stored)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, input) {
		t.Fatal("stored stream does not decompress to the input")
	}
	waitGoroutines(t, before)
}

var errSource = errors.New("checksum mismatch")

// TestCompressStreamFailsWithTheSourceError: the checksum verdict (an error from the source at its end)
// fails the stream, so the upload never completes.
func TestCompressStreamFailsWithTheSourceError(t *testing.T) {
	before := runtime.NumGoroutine()
	src := io.MultiReader(bytes.NewReader(make([]byte, 2*pipelineChunkSize+7)), errorReader{errSource})
	err := compressStream(io.Discard, src, io.Discard, snapshot.CompressionGzip)
	if !errors.Is(err, errSource) {
		t.Fatalf("got %v, want %v", err, errSource)
	}
	waitGoroutines(t, before)
}

// TestCompressStreamStopsReadingWhenTheStoreFails: a failed upload ends the pipeline, including the
// reading stage, although the source would go on for ever.
func TestCompressStreamStopsReadingWhenTheStoreFails(t *testing.T) {
	before := runtime.NumGoroutine()
	src := &shortReader{r: rand.NewChaCha8([32]byte{5}), max: 1 << 20}
	err := compressStream(failAfter{}, src, io.Discard, snapshot.CompressionGzip)
	if !errors.Is(err, errStore) {
		t.Fatalf("got %v, want %v", err, errStore)
	}
	waitGoroutines(t, before)
}

type shortReader struct {
	r   io.Reader
	max int
}

func (s *shortReader) Read(p []byte) (int, error) { return s.r.Read(p[:min(len(p), s.max)]) }

type errorReader struct{ err error }

func (e errorReader) Read([]byte) (int, error) { return 0, e.err }

var errStore = errors.New("upload failed")

type failAfter struct{}

func (failAfter) Write([]byte) (int, error) { return 0, errStore }
