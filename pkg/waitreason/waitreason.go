// Package waitreason waits for something that can say why it is not done yet, so that a wait that times
// out reports the last reason instead of a bare "timed out" (the seed bootstrap and the demo use it).
package waitreason

import (
	"context"
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// ErrNotDone is returned by Poll when the timeout passed before check reported done.
var ErrNotDone = errors.New("not done")

// Poll calls check at once and then every interval until it returns "" (done), up to timeout. check returns
// why it is not done yet; its errors (not found yet, a transient read failure) are retried and become the
// reason, except for a read the deadline itself cut off, which would hide the last real reason. Poll
// returns nil when done, the cause of ctx when the caller's context ended, and otherwise ErrNotDone with
// the last reason.
func Poll(ctx context.Context, interval, timeout time.Duration, check func(ctx context.Context) (string, error)) (lastReason string, err error) {
	last := "not checked yet"
	err = wait.PollUntilContextTimeout(ctx, interval, timeout, true, func(ctx context.Context) (bool, error) {
		reason, err := check(ctx)
		if err != nil {
			if ctx.Err() == nil {
				last = err.Error()
			}
			return false, nil
		}
		last = reason
		return reason == "", nil
	})
	switch {
	case err == nil:
		return "", nil
	case ctx.Err() != nil && context.Cause(ctx) != context.DeadlineExceeded:
		return last, context.Cause(ctx)
	default:
		return last, ErrNotDone
	}
}
