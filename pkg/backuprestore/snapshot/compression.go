package snapshot

import (
	"compress/lzw"
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
)

// Compression is the codec a snapshot's contents are stored with. The codec is recorded in the object
// name (its suffix) so a reader can decompress without any other metadata.
type Compression string

const (
	// CompressionNone stores the contents as they are.
	CompressionNone Compression = ""
	// CompressionGzip is gzip (RFC 1952), object suffix ".gz"; the sidecar's default policy.
	CompressionGzip Compression = "gzip"
	// CompressionLZW is LZW as in compress(1) with LSB order and 8-bit literals, object suffix ".Z".
	CompressionLZW Compression = "lzw"
	// CompressionZlib is zlib (RFC 1950), object suffix ".zlib".
	CompressionZlib Compression = "zlib"
)

// deflateLevel is the level of gzip and zlib output. The codecs are klauspost/compress's, which write the
// same formats as the standard library (any gzip/zlib reader, including the upstream sidecar's, reads
// them); its level 2 compresses etcd databases about as well as the standard library's default level at
// five times the speed, which keeps a full snapshot from being bound by compression on one core
// (see test/bench/sidecar BenchmarkFullSnapshot).
const deflateLevel = 2

// lzwLiteralWidth is the literal code width of the LZW streams existing backups were written with.
const lzwLiteralWidth = 8

var compressionSuffixes = map[Compression]string{
	CompressionNone: "",
	CompressionGzip: ".gz",
	CompressionLZW:  ".Z",
	CompressionZlib: ".zlib",
}

// ParseCompressionPolicy maps the --compression-policy flag value to a Compression, so that a typo in
// the flag fails at start-up rather than producing objects nobody can read.
func ParseCompressionPolicy(policy string) (Compression, error) {
	c := Compression(policy)
	if _, ok := compressionSuffixes[c]; !ok || c == CompressionNone {
		return "", fmt.Errorf("unknown compression policy %q (want %q, %q or %q)", policy, CompressionGzip, CompressionLZW, CompressionZlib)
	}
	return c, nil
}

// Suffix is the object-name suffix that marks contents compressed with c.
func (c Compression) Suffix() string {
	return compressionSuffixes[c]
}

// compressionForSuffix is the inverse of Suffix for the non-empty suffixes.
func compressionForSuffix(suffix string) (Compression, bool) {
	for c, s := range compressionSuffixes {
		if s != "" && s == suffix {
			return c, true
		}
	}
	return "", false
}

// NewCompressor wraps w so that everything written is compressed with c. Closing the result flushes
// the codec's trailer but does not close w, so the caller keeps control of the destination.
func NewCompressor(w io.Writer, c Compression) (io.WriteCloser, error) {
	switch c {
	case CompressionNone:
		return nopWriteCloser{w}, nil
	case CompressionGzip:
		return gzip.NewWriterLevel(w, deflateLevel)
	case CompressionLZW:
		return lzw.NewWriter(w, lzw.LSB, lzwLiteralWidth), nil
	case CompressionZlib:
		return zlib.NewWriterLevel(w, deflateLevel)
	default:
		return nil, fmt.Errorf("unknown compression %q", c)
	}
}

// NewDecompressor wraps r so that reads return the contents decompressed with c. Closing the result
// releases the codec but does not close r.
func NewDecompressor(r io.Reader, c Compression) (io.ReadCloser, error) {
	switch c {
	case CompressionNone:
		return io.NopCloser(r), nil
	case CompressionGzip:
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, fmt.Errorf("opening gzip stream: %w", err)
		}
		return zr, nil
	case CompressionLZW:
		return lzw.NewReader(r, lzw.LSB, lzwLiteralWidth), nil
	case CompressionZlib:
		zr, err := zlib.NewReader(r)
		if err != nil {
			return nil, fmt.Errorf("opening zlib stream: %w", err)
		}
		return zr, nil
	default:
		return nil, fmt.Errorf("unknown compression %q", c)
	}
}

// nopWriteCloser lets the uncompressed case share the compressor's Close contract.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
