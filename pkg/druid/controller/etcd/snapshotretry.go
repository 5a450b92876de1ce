package etcd

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// snapshotRetries spaces out the full snapshot requests before an update while they fail: every watch
// event (a lease renewal, a pod's status) runs the spec flow again, and without this each one would ask
// the sidecar anew. After n consecutive failures of an Etcd's pending update the next request waits
// retryBaseDelay·2^(n-1), at most retryMaxDelay. It is memory only: a restarted druid asks once at once,
// then backs off again.
//
// The state belongs to one pending update (stoppingUpdate.key): the failures and refusals of an update
// that was withdrawn (a hibernation undone before it went ahead) say nothing about a later one, whose
// refusal grace must run from its own first refusal. A request for another update starts afresh, and the
// spec flow forgets an Etcd's state whenever no stopping update is pending.
type snapshotRetries struct {
	mu    sync.Mutex
	state map[types.NamespacedName]snapshotRetry
}

type snapshotRetry struct {
	// update is the key of the update the counts belong to.
	update    string
	failures  int
	notBefore time.Time
	// refusals counts the consecutive refusals (401/403) since refusedSince; any other failure resets it.
	refusals     int
	refusedSince time.Time
}

// wait is how long the next request of key's update must still wait at now (0: ask now).
func (r *snapshotRetries) wait(key types.NamespacedName, update string, now time.Time) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.state[key]
	if !ok || s.update != update {
		return 0
	}
	if d := s.notBefore.Sub(now); d > 0 {
		return d
	}
	return 0
}

// failed counts a failed request of key's update at now and returns the delay before the next one.
func (r *snapshotRetries) failed(key types.NamespacedName, update string, now time.Time) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fail(key, update, now, false)
}

// refused counts a request of key's update refused at now (401/403) and returns since when and how many
// times in a row the sidecar refused this update, and the delay before the next request.
func (r *snapshotRetries) refused(key types.NamespacedName, update string, now time.Time) (since time.Time, refusals int, retryIn time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	retryIn = r.fail(key, update, now, true)
	s := r.state[key]
	return s.refusedSince, s.refusals, retryIn
}

func (r *snapshotRetries) fail(key types.NamespacedName, update string, now time.Time, refusal bool) time.Duration {
	if r.state == nil {
		r.state = map[types.NamespacedName]snapshotRetry{}
	}
	s := r.state[key]
	if s.update != update {
		s = snapshotRetry{update: update}
	}
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

// forget drops key's state: the snapshot was taken, the update went ahead without it, or no stopping
// update is pending (any longer).
func (r *snapshotRetries) forget(key types.NamespacedName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.state, key)
}
