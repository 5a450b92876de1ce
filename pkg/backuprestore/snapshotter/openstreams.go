package snapshotter

import (
	"slices"
	"sync"
	"time"
)

// openStreams are the start times of the streams open now. Full snapshots run one at a time (opMu), but
// nothing here relies on that.
type openStreams struct {
	mu     sync.Mutex
	starts []time.Time
}

// open records a stream begun at start and returns the function that records its end.
func (o *openStreams) open(start time.Time) (closed func()) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.starts = append(o.starts, start)
	return func() {
		o.mu.Lock()
		defer o.mu.Unlock()
		if i := slices.Index(o.starts, start); i >= 0 {
			o.starts = slices.Delete(o.starts, i, i+1)
		}
	}
}

// oldest is the start of the oldest open stream, false when none is open.
func (o *openStreams) oldest() (time.Time, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.starts) == 0 {
		return time.Time{}, false
	}
	return slices.MinFunc(o.starts, func(a, b time.Time) int { return a.Compare(b) }), true
}
