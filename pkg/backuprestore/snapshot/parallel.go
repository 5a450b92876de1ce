package snapshot

import (
	"errors"
	"fmt"
	"io"
	"runtime"

	"github.com/klauspost/pgzip"
)

// Parallel gzip splits the stream into blocks of parallelBlockSize and deflates up to parallelBlocks of
// them at once, each primed with the previous block's last 32 KiB as its dictionary and ended with a
// sync flush; the blocks are written in order inside one gzip member with one CRC, so the output is an
// ordinary gzip stream (RFC 1952) that compress/gzip, gzip(1) and the upstream sidecar read. It loses
// well under 1% of compression against the serial codec and holds about
// 2 × parallelBlocks × parallelBlockSize bytes of buffers.
const parallelBlockSize = 1 << 20

// parallelBlocks keeps every core busy with one block while the next is being filled.
var parallelBlocks = max(2, 2*runtime.GOMAXPROCS(0))

// NewParallelCompressor is NewCompressor for large streams, i.e. full snapshots: a full snapshot of a
// few GiB must not be bound by one core deflating it while the others idle. Gzip is compressed on
// several goroutines; the other codecs have no block structure that allows it and are serial.
// Writes and Close may return an error of w only later than the write that caused it; Close always
// reports it and, on failure as on success, leaves no goroutine of the codec running.
func NewParallelCompressor(w io.Writer, c Compression) (io.WriteCloser, error) {
	if c != CompressionGzip {
		return NewCompressor(w, c)
	}
	zw, err := pgzip.NewWriterLevel(w, deflateLevel)
	if err != nil {
		return nil, err
	}
	if err := zw.SetConcurrency(parallelBlockSize, parallelBlocks); err != nil {
		return nil, err
	}
	return &parallelGzip{zw: zw}, nil
}

// parallelGzip makes the codec's goroutines end when the stream fails: pgzip's Close returns early
// once an error was recorded and leaves its result writer waiting, while Reset stops and joins them.
// The first error is kept, because after the Reset the codec would accept writes again.
type parallelGzip struct {
	zw  *pgzip.Writer
	err error
}

func (p *parallelGzip) Write(b []byte) (int, error) {
	if p.err != nil {
		return 0, p.err
	}
	n, err := p.zw.Write(b)
	p.fail(err)
	return n, err
}

// errClosed fails writes after a successful Close.
var errClosed = errors.New("parallel gzip: write after Close")

func (p *parallelGzip) Close() error {
	if p.err == nil {
		p.fail(p.zw.Close())
		if p.err == nil {
			p.err = errClosed
		}
	}
	if p.err == errClosed {
		return nil
	}
	return p.err
}

// fail records err, if any, and stops the codec's goroutines.
func (p *parallelGzip) fail(err error) {
	if err != nil && p.err == nil {
		p.err = err
		p.zw.Reset(io.Discard)
	}
}

// NewReadAheadDecompressor is NewDecompressor for a consumer with work of its own on the contents
// (decoding deltas): gzip is decompressed on a goroutine of its own, up to blocks blocks of blockSize
// bytes ahead of the reads, so the two overlap. The other codecs are serial, as NewDecompressor's.
// Close stops the goroutine; it does not close r.
func NewReadAheadDecompressor(r io.Reader, c Compression, blockSize, blocks int) (io.ReadCloser, error) {
	if c != CompressionGzip {
		return NewDecompressor(r, c)
	}
	zr, err := pgzip.NewReaderN(r, blockSize, blocks)
	if err != nil {
		return nil, fmt.Errorf("opening gzip stream: %w", err)
	}
	return zr, nil
}
