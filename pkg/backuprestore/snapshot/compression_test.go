package snapshot

import (
	"bytes"
	"io"
	"math/rand/v2"
	"testing"
	"time"
)

func TestCompressionRoundTrip(t *testing.T) {
	payload := make([]byte, 1<<20)
	rng := rand.NewChaCha8([32]byte{1})
	_, _ = rng.Read(payload[:len(payload)/2]) // half random, half zeros: compressible and not
	for _, c := range []Compression{CompressionNone, CompressionGzip, CompressionLZW, CompressionZlib} {
		t.Run(string(c)+c.Suffix(), func(t *testing.T) {
			var buf bytes.Buffer
			w, err := NewCompressor(&buf, c)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(w, bytes.NewReader(payload)); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if c != CompressionNone && buf.Len() >= len(payload) {
				t.Fatalf("%s did not compress: %d bytes from %d", c, buf.Len(), len(payload))
			}
			r, err := NewDecompressor(&buf, c)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, payload) {
				t.Fatalf("round trip changed the payload")
			}
			// The suffix in a name selects the same codec again.
			s := NewFull(1, time.Unix(1, 0), c, false)
			if s.Compression() != c {
				t.Fatalf("Compression() from suffix %q = %q, want %q", s.CompressionSuffix, s.Compression(), c)
			}
		})
	}
}

func TestDecompressorRejectsGarbage(t *testing.T) {
	for _, c := range []Compression{CompressionGzip, CompressionZlib} {
		if _, err := NewDecompressor(bytes.NewReader([]byte("not compressed at all")), c); err == nil {
			t.Fatalf("%s: want an error for a non-%s stream", c, c)
		}
	}
}

func TestParseCompressionPolicy(t *testing.T) {
	for policy, want := range map[string]Compression{"gzip": CompressionGzip, "lzw": CompressionLZW, "zlib": CompressionZlib} {
		got, err := ParseCompressionPolicy(policy)
		if err != nil || got != want {
			t.Fatalf("ParseCompressionPolicy(%q) = %q, %v", policy, got, err)
		}
	}
	for _, bad := range []string{"", "GZIP", "bzip2"} {
		if _, err := ParseCompressionPolicy(bad); err == nil {
			t.Fatalf("ParseCompressionPolicy(%q): want an error", bad)
		}
	}
}
