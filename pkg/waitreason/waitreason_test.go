package waitreason

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestPollReturnsOnceCheckIsDone(t *testing.T) {
	calls := 0
	last, err := Poll(t.Context(), time.Millisecond, time.Minute, func(context.Context) (string, error) {
		calls++
		if calls < 3 {
			return "not yet", nil
		}
		return "", nil
	})
	if err != nil || last != "" || calls != 3 {
		t.Fatalf("Poll = %q, %v after %d calls; want done after 3", last, err, calls)
	}
}

func TestPollTimesOutWithTheLastReason(t *testing.T) {
	calls := 0
	last, err := Poll(t.Context(), time.Millisecond, 50*time.Millisecond, func(context.Context) (string, error) {
		calls++
		if calls == 1 {
			return "", errors.New("not found")
		}
		return "2 of 3 members ready", nil
	})
	if !errors.Is(err, ErrNotDone) || last != "2 of 3 members ready" {
		t.Fatalf("Poll = %q, %v; want ErrNotDone with the last reason", last, err)
	}
}

func TestPollKeepsAReadErrorAsTheReason(t *testing.T) {
	last, err := Poll(t.Context(), time.Millisecond, 20*time.Millisecond, func(context.Context) (string, error) {
		return "", errors.New("connection refused")
	})
	if !errors.Is(err, ErrNotDone) || last != "connection refused" {
		t.Fatalf("Poll = %q, %v; want ErrNotDone with the read error", last, err)
	}
}

func TestPollReturnsTheCauseOfACancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancelCause(t.Context())
	stop := errors.New("interrupted by the user")
	last, err := Poll(ctx, time.Millisecond, time.Minute, func(context.Context) (string, error) {
		cancel(stop)
		return "not yet", nil
	})
	if !errors.Is(err, stop) || last != "not yet" {
		t.Fatalf("Poll = %q, %v; want the cancellation cause", last, err)
	}
}
