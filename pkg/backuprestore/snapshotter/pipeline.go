package snapshotter

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshotformat"
)

// The full-snapshot pipeline runs its stages on separate goroutines so that they overlap instead of
// adding up: receiving etcd's stream (readAhead), hashing it for the checksum verification, scanning it
// for the revision and handing it to the codec (compressStream), deflating (the parallel codec's
// goroutines) and uploading (the store, reading the pipe). The receiving stage does nothing but receive:
// etcd sends only as far ahead as the client's flow-control window, so whatever else that goroutine
// did (the hash took a third of its time) would hold etcd's stream back. The stages hand over chunks of pipelineChunkSize and at
// most pipelineChunks of them are in flight, which bounds the pipeline's memory to a few MiB whatever
// the size of the database.
const (
	pipelineChunkSize = 1 << 20
	pipelineChunks    = 4
	// uploadWriteSize is the size of the writes the store receives (gocloud's upload reads 1 MiB at a
	// time). The codecs write in pieces of a few hundred bytes; unbuffered, each would be a goroutine
	// hand-over through the pipe and, for file-backed stores, a write system call.
	uploadWriteSize = 1 << 20
)

// chunk is a filled buffer, or the error (io.EOF at the end) that ended the source.
type chunk struct {
	data []byte
	err  error
}

// readAhead reads src on its own goroutine into pipelineChunks recycled buffers. The consumer sends
// every buffer it received back on free when it is done with it, and closes stop when it gives up; the
// goroutine then ends as soon as a read of src returns (the caller makes sure one does, e.g. by
// cancelling the context of the stream). The channel is closed after the last chunk.
func readAhead(src io.Reader, stop <-chan struct{}) (chunks <-chan chunk, free chan<- []byte) {
	out := make(chan chunk, pipelineChunks)
	back := make(chan []byte, pipelineChunks)
	for range pipelineChunks {
		back <- make([]byte, pipelineChunkSize)
	}
	go func() {
		defer close(out)
		for {
			var buf []byte
			select {
			case buf = <-back:
			case <-stop:
				return
			}
			n, err := io.ReadFull(src, buf)
			if errors.Is(err, io.ErrUnexpectedEOF) {
				err = io.EOF
			}
			if n > 0 {
				out <- chunk{data: buf[:n]}
			}
			if err != nil {
				out <- chunk{err: err}
				return
			}
		}
	}()
	return out, back
}

// compressStream copies src, a snapshot stream with its checksum trailer, to dst compressed with c,
// showing every byte to verifier and scan on the way. At the end of src the verifier decides: only a
// stream that matches its trailer is finished (the codec closed, dst flushed); for any other, as for
// an error of src or dst, the error is returned before dst sees the end, so the upload reading it
// fails and stores nothing.
func compressStream(dst io.Writer, src io.Reader, verifier *snapshotformat.Verifier, scan io.Writer, c snapshot.Compression) (err error) {
	out := bufio.NewWriterSize(dst, uploadWriteSize)
	zw, err := snapshot.NewParallelCompressor(out, c)
	if err != nil {
		return err
	}
	stop := make(chan struct{})
	chunks, free := readAhead(src, stop)
	defer func() {
		if err != nil {
			_ = zw.Close() // joins the codec's goroutines; the stream is failed anyway
		}
		close(stop)
		for range chunks { // the reader may hold sends buffered in the channel; let it finish
		}
	}()
	for ch := range chunks {
		if ch.err != nil {
			if !errors.Is(ch.err, io.EOF) {
				return fmt.Errorf("reading the etcd snapshot stream: %w", ch.err)
			}
			break
		}
		_, _ = verifier.Write(ch.data)
		_, _ = scan.Write(ch.data) // a scanner reports a malformed database when asked for the result
		if _, err := zw.Write(ch.data); err != nil {
			return err
		}
		free <- ch.data[:cap(ch.data)]
	}
	if err := verifier.Verify(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return out.Flush()
}
