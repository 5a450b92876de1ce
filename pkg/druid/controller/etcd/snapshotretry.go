package etcd

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// snapshotRetries spaces out the full snapshot requests before an update while they fail: every watch
// event (a lease renewal, a pod's status) runs the spec flow again, and without this each one would ask
// the sidecar anew. After n consecutive failures of an Etcd the next request waits retryBaseDelay·2^(n-1),
// at most retryMaxDelay. It is memory only: a restarted druid asks once at once, then backs off again.
type snapshotRetries struct {
	mu    sync.Mutex
	state map[types.NamespacedName]snapshotRetry
}

type snapshotRetry struct {
	failures  int
	notBefore time.Time
	// refusals counts the consecutive refusals (401/403) since refusedSince; any other failure resets it.
	refusals     int
	refusedSince time.Time
}

// wait is how long the next request of key must still wait at now (0: ask now).
func (r *snapshotRetries) wait(key types.NamespacedName, now time.Time) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if d := r.state[key].notBefore.Sub(now); d > 0 {
		return d
	}
	return 0
}

// failed counts a failed request of key at now and returns the delay before the next one.
func (r *snapshotRetries) failed(key types.NamespacedName, now time.Time) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fail(key, now, false)
}

// refused counts a request of key refused at now (401/403) and returns since when and how many times in a
// row the sidecar refused, and the delay before the next request.
func (r *snapshotRetries) refused(key types.NamespacedName, now time.Time) (since time.Time, refusals int, retryIn time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	retryIn = r.fail(key, now, true)
	s := r.state[key]
	return s.refusedSince, s.refusals, retryIn
}

func (r *snapshotRetries) fail(key types.NamespacedName, now time.Time, refusal bool) time.Duration {
	if r.state == nil {
		r.state = map[types.NamespacedName]snapshotRetry{}
	}
	s := r.state[key]
	s.failures++
	switch {
	case !refusal:
		s.refusals, s.refusedSince = 0, time.Time{}
	case s.refusals == 0:
		s.refusals, s.refusedSince = 1, now
	default:
		s.refusals++
	}
	delay := retryMaxDelay
	if s.failures < 32 {
		delay = min(retryBaseDelay<<(s.failures-1), retryMaxDelay)
	}
	s.notBefore = now.Add(delay)
	r.state[key] = s
	return delay
}

// succeeded forgets key's failures (also when an update went ahead without the snapshot).
func (r *snapshotRetries) succeeded(key types.NamespacedName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.state, key)
}
