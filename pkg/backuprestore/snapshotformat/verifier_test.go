package snapshotformat

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

// streamWithTrailer is contents followed by their sha256, as etcd sends a snapshot.
func streamWithTrailer(contents []byte) []byte {
	sum := sha256.Sum256(contents)
	return append(bytes.Clone(contents), sum[:]...)
}

// writeInPieces writes stream to v in pieces of random sizes around the trailer's length.
func writeInPieces(v *Verifier, stream []byte, rng *rand.Rand) {
	for len(stream) > 0 {
		n := min(len(stream), []int{1, checksumSize - 1, checksumSize, checksumSize + 1, 1000, 70000}[rng.IntN(6)])
		_, _ = v.Write(stream[:n])
		stream = stream[n:]
	}
}

func TestVerifier(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	contents := make([]byte, 300000)
	for i := range contents {
		contents[i] = byte(rng.IntN(256))
	}
	stream := streamWithTrailer(contents)

	t.Run("a stream written in pieces of any size verifies", func(t *testing.T) {
		for range 20 {
			v := NewFullSnapshotVerifier("snap")
			writeInPieces(v, stream, rng)
			if err := v.Verify(); err != nil || v.DatabaseSize() != int64(len(contents)) {
				t.Fatalf("Verify() = %v, DatabaseSize %d, want nil and %d", err, v.DatabaseSize(), len(contents))
			}
		}
	})

	t.Run("a flipped byte anywhere is a mismatch naming the object", func(t *testing.T) {
		for _, pos := range []int{0, len(contents) / 2, len(contents) - 1, len(contents), len(stream) - 1} {
			corrupted := bytes.Clone(stream)
			corrupted[pos] ^= 0x01
			v := NewFullSnapshotVerifier("snap-name")
			writeInPieces(v, corrupted, rng)
			if err := v.Verify(); !errors.Is(err, ErrChecksumMismatch) || !strings.Contains(err.Error(), "snap-name") {
				t.Fatalf("flipped byte %d: Verify() = %v, want ErrChecksumMismatch naming snap-name", pos, err)
			}
		}
	})

	t.Run("a stream cut short does not verify", func(t *testing.T) {
		for _, n := range []int{0, checksumSize - 1, checksumSize, len(stream) - 1} {
			v := NewFullSnapshotVerifier("snap")
			writeInPieces(v, stream[:n], rng)
			err := v.Verify()
			if err == nil {
				t.Fatalf("%d of %d bytes: Verify() = nil", n, len(stream))
			}
			if n < checksumSize && !errors.Is(err, ErrTruncated) {
				t.Fatalf("%d bytes: Verify() = %v, want ErrTruncated", n, err)
			}
		}
	})

	t.Run("empty contents with their trailer verify", func(t *testing.T) {
		v := NewFullSnapshotVerifier("snap")
		_, _ = v.Write(streamWithTrailer(nil))
		if err := v.Verify(); err != nil || v.DatabaseSize() != 0 {
			t.Fatalf("Verify() = %v, DatabaseSize %d", err, v.DatabaseSize())
		}
	})
}
