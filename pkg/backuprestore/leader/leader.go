// Package leader elects the backup leader the recommended way ("Leading ETCD main container's
// sidecar is the backup leader"): every sidecar polls its own etcd member, and the sidecar whose member
// is the raft leader leads. Nothing extra is stored in etcd and the snapshots are always taken over a
// local connection.
//
// Leadership is observed, not held: when the raft leader changes, the old sidecar notices at its next
// poll (or at once, when its member stops answering), so two sidecars may both believe they lead for up
// to one ReelectionPeriod. The work the leader does tolerates that: the snapshotter never writes a gapped
// delta (an overlapping one only in the narrow race of a flush after a quorum loss, which restores
// tolerate), garbage collection deletes idempotently, defragmentation and member cleanup re-check the
// cluster before every step.
package leader

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/go-logr/logr"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
)

// DefaultReelectionPeriod is how often the local member is asked whether it leads (--reelection-period).
const DefaultReelectionPeriod = etcdpod.DefaultReelectionPeriod

// Callbacks are what a leader does. OnStartedLeading runs in its own goroutine with a context that is
// cancelled when leadership ends; OnStoppedLeading runs after that goroutine returned, so that a new
// term never overlaps the previous one inside this sidecar.
type Callbacks struct {
	OnStartedLeading func(ctx context.Context)
	OnStoppedLeading func()
}

// Options configure an Elector.
type Options struct {
	// Client reaches the local etcd member; Endpoint is its client URL (Status is asked there only).
	Client   *clientv3.Client
	Endpoint string
	// ReelectionPeriod is the poll period; 0 means DefaultReelectionPeriod.
	ReelectionPeriod time.Duration
	// Timeout bounds one status request; 0 means the ReelectionPeriod.
	Timeout   time.Duration
	Callbacks Callbacks
	Log       logr.Logger
}

// Elector follows the raft leadership of the local member.
type Elector struct {
	opts Options
	log  logr.Logger

	mu              sync.RWMutex
	leading         bool
	leaderClientURL string
}

// New prepares an elector; Run starts it.
func New(opts Options) (*Elector, error) {
	if opts.Client == nil || opts.Endpoint == "" {
		return nil, errors.New("leader: client and local endpoint are required")
	}
	if opts.ReelectionPeriod <= 0 {
		opts.ReelectionPeriod = DefaultReelectionPeriod
	}
	if opts.Timeout <= 0 {
		opts.Timeout = opts.ReelectionPeriod
	}
	return &Elector{opts: opts, log: opts.Log.WithName("leader")}, nil
}

// IsLeader tells whether this sidecar is the backup leader now.
func (e *Elector) IsLeader() bool {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.leading
}

// LeaderClientURL is a client URL of the raft leader as last observed ("" when unknown), where a
// follower forwards snapshot requests to.
func (e *Elector) LeaderClientURL() string {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.leaderClientURL
}

// Run polls until ctx ends; leadership held at the end is given up (OnStoppedLeading runs).
func (e *Elector) Run(ctx context.Context) {
	var term *term
	defer func() {
		if term != nil {
			e.stop(term)
		}
	}()
	ticker := time.NewTicker(e.opts.ReelectionPeriod)
	defer ticker.Stop()
	for {
		leads, url := e.observe(ctx)
		e.mu.Lock()
		e.leaderClientURL = url
		e.mu.Unlock()
		switch {
		case leads && term == nil:
			term = e.start(ctx)
		case !leads && term != nil:
			e.stop(term)
			term = nil
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// term is one leadership term: the context of OnStartedLeading and the end of its goroutine.
type term struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func (e *Elector) start(ctx context.Context) *term {
	e.log.Info("Became the backup leader")
	tctx, cancel := context.WithCancel(ctx)
	t := &term{cancel: cancel, done: make(chan struct{})}
	e.mu.Lock()
	e.leading = true
	e.mu.Unlock()
	go func() {
		defer close(t.done)
		if e.opts.Callbacks.OnStartedLeading != nil {
			e.opts.Callbacks.OnStartedLeading(tctx)
		}
	}()
	return t
}

func (e *Elector) stop(t *term) {
	e.log.Info("No longer the backup leader")
	e.mu.Lock()
	e.leading = false
	e.mu.Unlock()
	t.cancel()
	<-t.done
	if e.opts.Callbacks.OnStoppedLeading != nil {
		e.opts.Callbacks.OnStoppedLeading()
	}
}

// observe asks the local member whether it leads and who does. An unreachable member does not lead:
// its sidecar must not back up a cluster it cannot see.
func (e *Elector) observe(ctx context.Context) (leads bool, leaderURL string) {
	sctx, cancel := context.WithTimeout(ctx, e.opts.Timeout)
	defer cancel()
	st, err := e.opts.Client.Status(sctx, e.opts.Endpoint)
	if err != nil {
		e.log.V(1).Info("Local member does not answer", "error", err.Error())
		return false, ""
	}
	leads = st.Leader != 0 && st.Leader == st.Header.GetMemberId()
	if leads {
		return true, e.opts.Endpoint
	}
	if st.Leader == 0 {
		return false, ""
	}
	list, err := e.opts.Client.MemberList(sctx, clientv3.WithSerializable())
	if err != nil {
		return false, ""
	}
	for _, m := range list.Members {
		if m.GetID() == st.Leader && len(m.GetClientURLs()) > 0 {
			return false, m.GetClientURLs()[0]
		}
	}
	return false, ""
}
