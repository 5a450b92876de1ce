package snapstore

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"
)

// blockingBody is a body whose reads wait for its context, as a driver's do on a silent connection.
type blockingBody struct {
	ctx    context.Context
	closed bool
}

func (b *blockingBody) Read([]byte) (int, error) {
	<-b.ctx.Done()
	return 0, b.ctx.Err()
}

func (b *blockingBody) Close() error {
	b.closed = true
	return nil
}

func noWrap(err error, _ string) error { return err }

// A download the caller cancels is no stall: the error is the caller's cancellation, so that a
// shutdown is not reported as a silent store.
func TestCancelledDownloadIsNoStall(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	var body *blockingBody
	rc, err := fetchWatched(ctx, time.Hour, noWrap, func(ctx context.Context) (io.ReadCloser, error) {
		body = &blockingBody{ctx: ctx}
		return body, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	_, err = rc.Read(make([]byte, 1))
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrDownloadStalled) {
		t.Fatalf("read after the caller cancelled: err = %v, want context.Canceled and no stall", err)
	}
	if err := rc.Close(); err != nil || !body.closed {
		t.Fatalf("Close: err = %v, body closed %v", err, body.closed)
	}
}

// A body closed without a read releases it; a read that the store holds for the limit fails with
// ErrDownloadStalled, also when the opening itself waits.
func TestDownloadStallOnOpenAndOnRead(t *testing.T) {
	const limit = 50 * time.Millisecond
	// Without the watch the reads below would end with this deadline, not with the stall.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	open := func(ctx context.Context) (io.ReadCloser, error) { return &blockingBody{ctx: ctx}, nil }
	rc, err := fetchWatched(ctx, limit, noWrap, open)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rc.Read(make([]byte, 1)); !errors.Is(err, ErrDownloadStalled) {
		t.Fatalf("read of a silent body: err = %v, want ErrDownloadStalled", err)
	}
	_ = rc.Close()

	_, err = fetchWatched(ctx, limit, func(err error, op string) error { return errors.Join(errors.New(op), err) },
		func(ctx context.Context) (io.ReadCloser, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		})
	if !errors.Is(err, ErrDownloadStalled) || !errors.Is(err, context.Canceled) {
		t.Fatalf("opening that waits: err = %v, want ErrDownloadStalled", err)
	}

	unread, err := fetchWatched(ctx, limit, noWrap, open)
	if err != nil {
		t.Fatal(err)
	}
	if err := unread.Close(); err != nil {
		t.Fatal(err)
	}
}

// outliving: the caller's cancellation ends the request's context only a limit later, with a stall as
// the cause; a stall ends it at once; stop ends it.
func TestOutlivingContext(t *testing.T) {
	t.Run("the caller cancels", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		out, stop := outliving(ctx, 50*time.Millisecond)
		defer stop()
		long, stopLong := outliving(ctx, time.Hour)
		defer stopLong()
		cancel()
		<-out.Done()
		if cause := context.Cause(out); !errors.Is(cause, ErrUploadStalled) || !errors.Is(cause, context.Canceled) {
			t.Fatalf("cause = %v, want a stall after the caller's cancellation", cause)
		}
		if long.Err() != nil {
			t.Fatalf("a context with an hour's limit ended with the caller's: %v", context.Cause(long))
		}
	})
	t.Run("a stall", func(t *testing.T) {
		ctx, cancel := context.WithCancelCause(t.Context())
		out, stop := outliving(ctx, time.Hour)
		defer stop()
		cancel(ErrUploadStalled)
		<-out.Done() // the test's deadline, were it to wait for the hour
		if cause := context.Cause(out); !errors.Is(cause, ErrUploadStalled) {
			t.Fatalf("cause = %v, want the stall", cause)
		}
	})
	t.Run("stop", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		out, stop := outliving(ctx, time.Hour)
		stop()
		cancel()
		if !errors.Is(out.Err(), context.Canceled) || errors.Is(context.Cause(out), ErrUploadStalled) {
			t.Fatalf("after stop: err %v, cause %v", out.Err(), context.Cause(out))
		}
	})
}
