package httpapi

import (
	"context"
	"fmt"
	"sync"
)

// Mode is how thoroughly the initializer checks the data directory.
type Mode string

const (
	// ModeFull validates everything; the wrapper asks for it after a crash or on first start.
	ModeFull Mode = "full"
	// ModeSanity is enough after a graceful exit of etcd, when the data on disk was written completely.
	ModeSanity Mode = "sanity"
)

// ParseMode accepts the query values of GET /initialization/start; empty means full.
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case "", ModeFull:
		return ModeFull, nil
	case ModeSanity:
		return ModeSanity, nil
	}
	return "", fmt.Errorf("unknown initialization mode %q, want %q or %q", s, ModeFull, ModeSanity)
}

// Initializer makes the member's data directory ready for etcd to start: validate, restore, or join.
type Initializer interface {
	Initialize(ctx context.Context, mode Mode) error
}

// Status is the initialization state the wrapper polls, spelled as on the wire.
type Status string

const (
	StatusNew        Status = "New"
	StatusProgress   Status = "Progress"
	StatusSuccessful Status = "Successful"
	StatusFailed     Status = "Failed"
)

// initialization runs at most one Initializer call at a time and remembers its outcome until the wrapper
// has read it once: a final status read resets to New, so that the next etcd (re)start of the same
// sidecar process initializes again instead of trusting an old result.
type initialization struct {
	mu      sync.Mutex
	status  Status
	lastErr error
}

// read returns the status and, for Failed, the reason; a final status is consumed.
func (i *initialization) read() (Status, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	status, err := i.status, i.lastErr
	if status == StatusSuccessful || status == StatusFailed {
		i.status, i.lastErr = StatusNew, nil
	}
	if status == "" {
		status = StatusNew
	}
	return status, err
}

// start runs init in the background when nothing ran or the last outcome was read; it reports whether it
// started one.
func (i *initialization) start(ctx context.Context, init Initializer, mode Mode, done func(error)) bool {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.status != "" && i.status != StatusNew {
		return false
	}
	i.status, i.lastErr = StatusProgress, nil
	go func() {
		err := init.Initialize(ctx, mode)
		i.mu.Lock()
		if err != nil {
			i.status, i.lastErr = StatusFailed, err
		} else {
			i.status = StatusSuccessful
		}
		i.mu.Unlock()
		done(err)
	}()
	return true
}
