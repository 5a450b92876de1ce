// Package memberdial keeps the sidecar's clients from asking the seed's DNS for the names of members that
// have not run yet.
//
// A member's advertised URLs name its pod in the peer Service (<pod>.<peer service>.<namespace>.svc). Until
// the pod has an address, the DNS answers that the name does not exist and caches that answer for its TTL
// (30 s on Gardener's seeds, whose CoreDNS runs `cache 30` and the kubernetes plugin's `ttl 30`). It gives
// the cached answer to everybody who asks, the leader's etcd among them, also after the pod started: nobody
// reaches the new member until the answer expires. A scale-up starts its new members at the same moment,
// and one that asks early for another (its heartbeat's survey, its learner's promotion) would hold that
// one back by up to 30 s.
package memberdial

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"time"
)

// ErrNotRunYet is the dial error for a member that has not run yet: its name is not asked for.
var ErrNotRunYet = errors.New("member has not run yet (its member lease was never renewed); its name is not looked up before")

// Gate is a dialer (grpc.WithContextDialer) for clients that reach the other members at their advertised
// URLs. It dials a member's address only once the member has run, i.e. its sidecar renewed its member
// lease at least once (which needs a serving etcd, so its pod had an address), or once Patience has passed
// since the gate was made: a member that serves without renewing (a learner, whose sidecar cannot read its
// identity yet; a sidecar that cannot reach the apiserver) is not cut off for longer than that, and by
// then the pods of a scale-up have long had their addresses. Other addresses (the client Service, the
// local member) are dialed as they are, and so is every member when the leases do not read: the gate only
// spares the DNS a question, it must not cut a member off.
type Gate struct {
	// Members maps each other member's advertised client address ("host:port", as in its URLs) to the
	// member's name.
	Members map[string]string
	// Ran returns the members among names that have run (heartbeat.PeerLiveness.Renewed).
	Ran func(ctx context.Context, names []string) ([]string, error)
	// Recheck is how long an answer of Ran stands; 0 asks at every dial of a member not known to have run.
	Recheck time.Duration
	// Since is when the gate was made and Patience how long it holds members back at most (0: without
	// end).
	Since    time.Time
	Patience time.Duration

	mu       sync.Mutex
	ran      map[string]bool
	checked  time.Time
	readFail bool
}

// DialContext dials addr ("host:port") unless it is the address of a member that has not run yet.
func (g *Gate) DialContext(ctx context.Context, addr string) (net.Conn, error) {
	if name, ok := g.Members[addr]; ok && !g.mayDial(ctx, name) {
		return nil, fmt.Errorf("not dialing %s of member %s: %w", addr, name, ErrNotRunYet)
	}
	var d net.Dialer
	return d.DialContext(ctx, "tcp", addr)
}

// mayDial tells whether member name may be dialed, asking Ran about every member not known to have run
// when its last answer is older than Recheck.
func (g *Gate) mayDial(ctx context.Context, name string) bool {
	if g.Patience > 0 && time.Since(g.Since) >= g.Patience {
		return true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ran[name] {
		return true
	}
	if g.checked.IsZero() || time.Since(g.checked) >= g.Recheck {
		g.ask(ctx)
	}
	return g.readFail || g.ran[name]
}

// ask reads which members not known to have run have run by now.
func (g *Gate) ask(ctx context.Context) {
	var unknown []string
	for _, member := range g.Members {
		if !g.ran[member] && !slices.Contains(unknown, member) {
			unknown = append(unknown, member)
		}
	}
	ran, err := g.Ran(ctx, unknown)
	g.checked, g.readFail = time.Now(), err != nil
	if g.ran == nil {
		g.ran = map[string]bool{}
	}
	for _, member := range ran {
		g.ran[member] = true
	}
}
