package snapstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// ErrUploadStalled reports an upload given up because the store held it for UploadOptions.StallTimeout
// without the driver asking the source for more bytes. A store that stops answering (a hung connection,
// a gateway that accepts and never replies) otherwise holds the upload, and with it every snapshot
// behind it and, for a full snapshot, the member's open read, for as long as the connection lives.
var ErrUploadStalled = errors.New("the store made no progress with the upload")

// stallWatch gives up an upload the store makes no progress with. Only the store's time counts: the
// clock stops while the driver waits for the source (see source), so that a slow source never trips it,
// nor a store that takes the parts the driver has read ahead within the limit, however long the whole
// upload takes.
type stallWatch struct {
	limit  time.Duration
	timer  *time.Timer
	cancel context.CancelCauseFunc
}

// watchStall returns the context for one upload, cancelled with ErrUploadStalled once the store has held
// the upload for limit since it last asked the source for bytes, and the watch, which the caller stops
// when the upload has ended. Only the context's cancellation can free a driver blocked on the store.
func watchStall(ctx context.Context, limit time.Duration) (context.Context, *stallWatch) {
	ctx, cancel := context.WithCancelCause(ctx)
	stalled := fmt.Errorf("%w for %s", ErrUploadStalled, limit)
	return ctx, &stallWatch{limit: limit, timer: time.AfterFunc(limit, func() { cancel(stalled) }), cancel: cancel}
}

// source wraps the upload's source r: the clock stops while a read of r is under way.
func (w *stallWatch) source(r io.Reader) io.Reader { return stallPausingReader{r: r, watch: w} }

// stop ends the watch and releases its context; call it once the upload has returned and its error has
// been read (stalledOr).
func (w *stallWatch) stop() {
	w.timer.Stop()
	w.cancel(nil)
}

// minCopyRate is the slowest server-side copy (see SaveStaged) taken for progress. A copy is one
// request per part, or one for the whole object, with nothing to watch while it runs; it is bounded in
// total, by StallTimeout plus a second per MiB.
const minCopyRate = 1 << 20

// copyTimeout bounds the server-side copy of size bytes.
func (o UploadOptions) copyTimeout(size int64) time.Duration {
	return o.StallTimeout + time.Duration(size/minCopyRate)*time.Second
}

// stalledOr returns the stall error when the watch ended the upload of ctx, else err. A driver reports
// its cancelled request only as context.Canceled; the cause says why.
func stalledOr(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); err != nil && errors.Is(cause, ErrUploadStalled) {
		return fmt.Errorf("%w (%w)", cause, err)
	}
	return err
}

type stallPausingReader struct {
	r     io.Reader
	watch *stallWatch
}

func (p stallPausingReader) Read(b []byte) (int, error) {
	p.watch.timer.Stop()
	defer p.watch.timer.Reset(p.watch.limit)
	return p.r.Read(b)
}
