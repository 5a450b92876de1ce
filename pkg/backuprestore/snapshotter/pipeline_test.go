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
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshotformat"
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

// snapshotStreamOf is contents followed by their sha256 trailer, as etcd sends a snapshot.
func snapshotStreamOf(contents []byte) []byte {
	sum := sha256.Sum256(contents)
	return append(bytes.Clone(contents), sum[:]...)
}

func TestCompressStreamDeliversEveryByteToScannerAndStore(t *testing.T) {
	contents := make([]byte, 3*pipelineChunkSize+pipelineChunkSize/3)
	_, _ = rand.NewChaCha8([32]byte{4}).Read(contents[:len(contents)/2])
	input := snapshotStreamOf(contents)
	before := runtime.NumGoroutine()
	var stored bytes.Buffer
	scanned := sha256.New()
	verifier := snapshotformat.NewFullSnapshotVerifier("test")
	// Irregular reads: the source returns at most 10 000 bytes per call.
	src := &shortReader{r: bytes.NewReader(input), max: 10_000}
	if err := compressStream(&stored, src, verifier, scanned, snapshot.CompressionGzip); err != nil {
		t.Fatal(err)
	}
	if want := sha256.Sum256(input); !bytes.Equal(scanned.Sum(nil), want[:]) {
		t.Fatal("the scanner did not see the stream as it was")
	}
	if verifier.DatabaseSize() != int64(len(contents)) {
		t.Fatalf("verified %d bytes before the trailer, want %d", verifier.DatabaseSize(), len(contents))
	}
	if got := gunzip(t, &stored); !bytes.Equal(got, input) {
		t.Fatal("stored stream does not decompress to the input, trailer included")
	}
	waitGoroutines(t, before)
}

func gunzip(t *testing.T, r io.Reader) []byte {
	t.Helper()
	zr, err := gzip.NewReader(r)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestCompressStreamNeverFinishesACorruptedSnapshot: a stream that does not match its trailer (a flipped
// byte early, in the last chunk, in the trailer; a stream cut short) fails with the verifier's verdict,
// and the store never receives the end of the compressed stream, so the upload cannot complete.
func TestCompressStreamNeverFinishesACorruptedSnapshot(t *testing.T) {
	contents := make([]byte, 2*pipelineChunkSize+pipelineChunkSize/2)
	_, _ = rand.NewChaCha8([32]byte{6}).Read(contents)
	input := snapshotStreamOf(contents)
	for _, tc := range []struct {
		name    string
		corrupt func([]byte) []byte
		want    error
	}{
		{"a byte of the first chunk", flip(100), snapshotformat.ErrChecksumMismatch},
		{"a byte of the last chunk", flip(len(contents) - 1), snapshotformat.ErrChecksumMismatch},
		{"a byte of the trailer", flip(len(input) - 1), snapshotformat.ErrChecksumMismatch},
		{"the last byte missing", func(b []byte) []byte { return b[:len(b)-1] }, snapshotformat.ErrChecksumMismatch},
		{"shorter than a trailer", func(b []byte) []byte { return b[:10] }, snapshotformat.ErrTruncated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := runtime.NumGoroutine()
			var stored bytes.Buffer
			src := &shortReader{r: bytes.NewReader(tc.corrupt(bytes.Clone(input))), max: 100_000}
			err := compressStream(&stored, src, snapshotformat.NewFullSnapshotVerifier("test"), io.Discard, snapshot.CompressionGzip)
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			zr, err := gzip.NewReader(&stored)
			if err == nil {
				_, err = io.ReadAll(zr)
			}
			if err == nil {
				t.Fatal("the store received a complete compressed stream of a corrupted snapshot")
			}
			waitGoroutines(t, before)
		})
	}
}

func flip(pos int) func([]byte) []byte {
	return func(b []byte) []byte { b[pos] ^= 0x01; return b }
}

var errSource = errors.New("connection reset")

// TestCompressStreamFailsWithTheSourceError: an error of etcd's stream fails the pipeline, so the
// upload never completes.
func TestCompressStreamFailsWithTheSourceError(t *testing.T) {
	before := runtime.NumGoroutine()
	src := io.MultiReader(bytes.NewReader(make([]byte, 2*pipelineChunkSize+7)), errorReader{errSource})
	err := compressStream(io.Discard, src, snapshotformat.NewFullSnapshotVerifier("test"), io.Discard, snapshot.CompressionGzip)
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
	err := compressStream(failAfter{}, src, snapshotformat.NewFullSnapshotVerifier("test"), io.Discard, snapshot.CompressionGzip)
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
