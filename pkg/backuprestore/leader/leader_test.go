package leader

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"

	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

// recorder counts the active leadership terms of each sidecar.
type recorder struct {
	mu      sync.Mutex
	active  map[int]bool
	started map[int]int
	stopped map[int]int
}

func (r *recorder) callbacks(i int) Callbacks {
	return Callbacks{
		OnStartedLeading: func(ctx context.Context) {
			r.mu.Lock()
			r.active[i] = true
			r.started[i]++
			r.mu.Unlock()
			<-ctx.Done()
		},
		OnStoppedLeading: func() {
			r.mu.Lock()
			r.active[i] = false
			r.stopped[i]++
			r.mu.Unlock()
		},
	}
}

func (r *recorder) activeOnes() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []int
	for i, a := range r.active {
		if a {
			out = append(out, i)
		}
	}
	return out
}

func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// One sidecar per member of a 3-member cluster: exactly the raft leader's sidecar leads, followers know
// its client URL, and after the leader's member stops another sidecar takes over.
func TestLeaderFollowsRaftLeadership(t *testing.T) {
	c := etcdserver.StartCluster(t, 3, nil)
	r := &recorder{active: map[int]bool{}, started: map[int]int{}, stopped: map[int]int{}}
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	electors := make([]*Elector, 3)
	for i, m := range c.Members {
		e, err := New(Options{Client: m.Client(t), Endpoint: m.Endpoint(), ReelectionPeriod: 100 * time.Millisecond,
			Callbacks: r.callbacks(i), Log: testr.New(t)})
		if err != nil {
			t.Fatal(err)
		}
		electors[i] = e
		wg.Go(func() { e.Run(ctx) })
	}
	t.Cleanup(func() { cancel(); wg.Wait() })

	leaderIdx := func() int {
		for i, m := range c.Members {
			if m == c.Leader() {
				return i
			}
		}
		return -1
	}
	eventually(t, 10*time.Second, "one active leader", func() bool {
		a := r.activeOnes()
		return len(a) == 1 && a[0] == leaderIdx()
	})
	first := r.activeOnes()[0]
	for i, e := range electors {
		if got, want := e.LeaderClientURL(), c.Members[first].Endpoint(); got != want {
			t.Fatalf("sidecar %d sees leader %q, want %q", i, got, want)
		}
		if e.IsLeader() != (i == first) {
			t.Fatalf("sidecar %d IsLeader = %v", i, e.IsLeader())
		}
	}

	c.Members[first].Stop()
	eventually(t, 20*time.Second, "another sidecar to take over", func() bool {
		a := r.activeOnes()
		return len(a) == 1 && a[0] != first && a[0] == leaderIdx()
	})
	r.mu.Lock()
	if r.stopped[first] != 1 || r.started[first] != 1 {
		t.Fatalf("old leader's terms: started %d, stopped %d", r.started[first], r.stopped[first])
	}
	r.mu.Unlock()

	// Ending Run gives the leadership up.
	cancel()
	wg.Wait()
	if a := r.activeOnes(); len(a) != 0 {
		t.Fatalf("still leading after Run ended: %v", a)
	}
}
