package snapshotter

import (
	"testing"
	"time"
)

// A paused watch asks for its cut again after 5 s, 10 s, 20 s, 40 s, then every minute: a store that
// keeps failing is not sent the whole memory limit every 5 s, and one that is back is used within a
// minute.
func TestPausedRetriesBackOffToAMinute(t *testing.T) {
	want := []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, time.Minute, time.Minute}
	delay := retryDelay
	for i, w := range want {
		delay = nextPausedRetryDelay(delay)
		if delay != w {
			t.Fatalf("retry %d after %v, want %v", i+2, delay, w)
		}
	}
}
