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
// URLs. It dials a member's host only once the member has run, i.e. its sidecar renewed its member lease
// at least once (which needs a serving etcd, so its pod had an address); other hosts (the client Service,
// the local member) are dialed as they are. Once a member has run, it is dialed from then on.
type Gate struct {
	// Members maps the host of each other member's advertised URLs to the member's name.
	Members map[string]string
	// Ran returns the members among names that have run (heartbeat.PeerLiveness.Renewed). When it fails,
	// the member is dialed: the gate only spares the DNS a question, it must not cut a member off.
	Ran func(ctx context.Context, names []string) ([]string, error)
	// Recheck is how long the answer of Ran stands for a member that had not run; 0 asks at every dial.
	Recheck time.Duration

	mu      sync.Mutex
	ran     map[string]bool
	checked time.Time
}

// DialContext dials addr ("host:port") unless its host is a member that has not run yet.
func (g *Gate) DialContext(ctx context.Context, addr string) (net.Conn, error) {
	if host, _, err := net.SplitHostPort(addr); err == nil {
		if name, ok := g.Members[host]; ok && !g.hasRun(ctx, name) {
			return nil, fmt.Errorf("not dialing %s of member %s: %w", addr, name, ErrNotRunYet)
		}
	}
	var d net.Dialer
	return d.DialContext(ctx, "tcp", addr)
}

// hasRun tells whether member name has run, asking Ran about every member not known to have run when the
// last answer is older than Recheck.
func (g *Gate) hasRun(ctx context.Context, name string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ran[name] {
		return true
	}
	if !g.checked.IsZero() && time.Since(g.checked) < g.Recheck {
		return false
	}
	var unknown []string
	for _, member := range g.Members {
		if !g.ran[member] && !slices.Contains(unknown, member) {
			unknown = append(unknown, member)
		}
	}
	ran, err := g.Ran(ctx, unknown)
	if err != nil {
		return true
	}
	g.checked = time.Now()
	if g.ran == nil {
		g.ran = map[string]bool{}
	}
	for _, member := range ran {
		g.ran[member] = true
	}
	return g.ran[name]
}
