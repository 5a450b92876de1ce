package httpapi

import (
	"context"
	"sync"

	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
)

// Initializer makes the member's data directory ready for etcd to start: validate, restore, or join.
type Initializer interface {
	Initialize(ctx context.Context, mode podwire.InitMode) error
}

// initialization runs at most one Initializer call at a time and remembers its outcome until the wrapper
// has read it once: a final status read resets to New, so that the next etcd (re)start of the same
// sidecar process initializes again instead of trusting an old result.
type initialization struct {
	mu      sync.Mutex
	status  podwire.InitStatus
	lastErr error
}

// read returns the status and, for Failed, the reason; a final status is consumed.
func (i *initialization) read() (podwire.InitStatus, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	status, err := i.status, i.lastErr
	if status == podwire.InitSuccessful || status == podwire.InitFailed {
		i.status, i.lastErr = podwire.InitNew, nil
	}
	if status == "" {
		status = podwire.InitNew
	}
	return status, err
}

// start runs init in the background when nothing ran or the last outcome was read; it reports whether it
// started one.
func (i *initialization) start(ctx context.Context, init Initializer, mode podwire.InitMode, done func(error)) bool {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.status != "" && i.status != podwire.InitNew {
		return false
	}
	i.status, i.lastErr = podwire.InitProgress, nil
	go func() {
		err := init.Initialize(ctx, mode)
		i.mu.Lock()
		if err != nil {
			i.status, i.lastErr = podwire.InitFailed, err
		} else {
			i.status = podwire.InitSuccessful
		}
		i.mu.Unlock()
		done(err)
	}()
	return true
}
