package snapstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// ErrUploadStalled reports an upload given up because the store held it for UploadOptions.StallTimeout
// without the driver asking the source for more bytes. A store that stops answering (a hung connection,
// a gateway that accepts and never replies) otherwise holds the upload, and with it every snapshot
// behind it and, for a full snapshot, the member's open read, for as long as the connection lives.
var ErrUploadStalled = errors.New("the store made no progress with the upload")

// ErrDownloadStalled reports a download (Fetch) given up because the store held a read of it, or its
// opening, for Config.DownloadStallTimeout. Without the bound a restore from a store that stops answering
// waits for as long as the connection lives, with the member down; given up, the restore fails having
// installed nothing, and its caller tries again with new requests.
var ErrDownloadStalled = errors.New("the store made no progress with the download")

// ErrListingStalled reports a listing given up because the store held the request for one of its pages
// for Config.DownloadStallTimeout. A restore lists the store before it reads anything.
var ErrListingStalled = errors.New("the store made no progress with the listing")

// stallWatch gives up a transfer the store makes no progress with: an upload, a download or a listing.
// Only the store's time counts. For an upload the clock stops while the driver waits for the source (see
// source), so that a slow source never trips it, nor a store that takes the parts the driver has read
// ahead within the limit, however long the whole upload takes; for a download it runs only during the
// reads of the body (fetchWatched), for a listing not while a page is handled (paused).
type stallWatch struct {
	limit  time.Duration
	timer  *time.Timer
	cancel context.CancelCauseFunc
}

// watchStall returns the context for one upload, cancelled with ErrUploadStalled once the store has held
// the upload for limit since it last asked the source for bytes, and the watch, which the caller stops
// when the upload has ended. Only the context's cancellation can free a driver blocked on the store.
func watchStall(ctx context.Context, limit time.Duration) (context.Context, *stallWatch) {
	return watchStallOf(ctx, limit, ErrUploadStalled)
}

// watchStallOf starts the clock of a watch that cancels the returned context with kind (ErrUploadStalled,
// ErrDownloadStalled or ErrListingStalled) once it has run for limit.
func watchStallOf(ctx context.Context, limit time.Duration, kind error) (context.Context, *stallWatch) {
	ctx, cancel := context.WithCancelCause(ctx)
	stalled := fmt.Errorf("%w for %s", kind, limit)
	return ctx, &stallWatch{limit: limit, timer: time.AfterFunc(limit, func() { cancel(stalled) }), cancel: cancel}
}

// source wraps the upload's source r: the clock stops while a read of r is under way.
func (w *stallWatch) source(r io.Reader) io.Reader { return stallPausingReader{r: r, watch: w} }

// paused runs f with the clock stopped: the caller's time, not the store's (a listing's page handled).
func (w *stallWatch) paused(f func()) {
	w.timer.Stop()
	defer w.timer.Reset(w.limit)
	f()
}

// stop ends the watch and releases its context; call it once the upload has returned and its error has
// been read (stalledOr).
func (w *stallWatch) stop() {
	w.timer.Stop()
	w.cancel(nil)
}

// outliving returns a context for a request whose answer the clean-up of a failed upload needs: the
// caller's cancellation of ctx does not end it at once, but limit later, so that a request under way runs
// to its answer (with the limit, one stall limit more, as ctx's own stall watch cannot fire once ctx has
// ended for another reason). A stall (ErrUploadStalled) ends it at once: then the store is what holds the
// request. stop releases it.
func outliving(ctx context.Context, limit time.Duration) (context.Context, func()) {
	out, cutShort := context.WithCancelCause(context.WithoutCancel(ctx))
	var mu sync.Mutex
	var grace *time.Timer
	stopped := false
	stopForwarding := context.AfterFunc(ctx, func() {
		cause := context.Cause(ctx)
		if errors.Is(cause, ErrUploadStalled) {
			cutShort(cause)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if !stopped { // else stop has run: no timer to leave behind
			grace = time.AfterFunc(limit, func() {
				cutShort(fmt.Errorf("%w for %s after the upload ended (%w)", ErrUploadStalled, limit, cause))
			})
		}
	})
	return out, func() {
		stopForwarding()
		mu.Lock()
		stopped = true
		if grace != nil {
			grace.Stop()
		}
		mu.Unlock()
		cutShort(nil)
	}
}

// minCopyRate is the slowest server-side copy (see SaveStaged) taken for progress. A copy is one
// request per part, or one for the whole object, with nothing to watch while it runs; it is bounded in
// total, by StallTimeout plus a second per MiB.
const minCopyRate = 1 << 20

// copyTimeout bounds the server-side copy of size bytes.
func (o UploadOptions) copyTimeout(size int64) time.Duration {
	return o.StallTimeout + time.Duration(size/minCopyRate)*time.Second
}

// stalledOr returns the stall error when the watch ended the transfer of ctx, else err. A driver reports
// its cancelled request only as context.Canceled; the cause says why. Whether context.Canceled is still
// in the chain depends on the driver and on when the stall came (net/http reports a body read cut short
// by its context's cause alone): tell a stall by ErrUploadStalled, ErrDownloadStalled or
// ErrListingStalled, never by context.Canceled.
func stalledOr(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); err != nil && isStall(cause) && !isStall(err) {
		return fmt.Errorf("%w (%w)", cause, err)
	}
	return err
}

func isStall(err error) bool {
	return errors.Is(err, ErrUploadStalled) || errors.Is(err, ErrDownloadStalled) || errors.Is(err, ErrListingStalled)
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

// fetchWatched opens a download with open under a stall watch of limit: the store may take that long to
// answer the request, and that long for each read of the body. Only the store's time counts: the clock
// stops between reads, so that a reader that takes its time with what it got (a restore applying
// deltas) never trips it, however long the whole download takes. Closing the body ends the watch.
// Errors of the opening and of the reads (but io.EOF) pass through wrap with the operation, "fetching"
// or "reading", so that they name the store and the key.
func fetchWatched(ctx context.Context, limit time.Duration, wrap func(err error, op string) error, open func(context.Context) (io.ReadCloser, error)) (io.ReadCloser, error) {
	wctx, watch := watchStallOf(ctx, limit, ErrDownloadStalled)
	body, err := open(wctx)
	if err != nil {
		err = stalledOr(wctx, err)
		watch.stop()
		return nil, wrap(err, "fetching")
	}
	watch.timer.Stop()
	return &stallBoundedBody{body: body, ctx: wctx, watch: watch, wrap: wrap}, nil
}

// stallBoundedBody is a download's body whose reads run on the watch's clock (see fetchWatched). It
// deliberately hides the body's io.WriterTo: io.Copy would read through it past the clock.
type stallBoundedBody struct {
	body  io.ReadCloser
	ctx   context.Context
	watch *stallWatch
	wrap  func(err error, op string) error
}

func (b *stallBoundedBody) Read(p []byte) (int, error) {
	b.watch.timer.Reset(b.watch.limit)
	n, err := b.body.Read(p)
	b.watch.timer.Stop()
	if err != nil && !errors.Is(err, io.EOF) {
		err = b.wrap(stalledOr(b.ctx, err), "reading")
	}
	return n, err
}

// Close ends the watch first, so that a driver whose Close waited for the store would not wait unbounded.
func (b *stallBoundedBody) Close() error {
	b.watch.stop()
	return b.body.Close()
}
