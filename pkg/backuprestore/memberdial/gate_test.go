package memberdial

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gardener-etcd/gardener-etcd/test/support/tripwire"
)

// A member is dialed once its lease shows it ran, never before; the answer that it has not stands for
// Recheck; other hosts are dialed without asking.
func TestAMemberIsDialedOnlyOnceItRan(t *testing.T) {
	wire := tripwire.New(t)
	_, port, _ := net.SplitHostPort(wire.Addr)
	member := net.JoinHostPort("localhost", port) // a member's address as its URL names it
	var asked atomic.Int32
	var hasRun atomic.Bool
	gate := &Gate{
		Members: map[string]string{member: "etcd-main-1"},
		Ran: func(_ context.Context, names []string) ([]string, error) {
			asked.Add(1)
			if hasRun.Load() {
				return names, nil
			}
			return nil, nil
		},
		Recheck: time.Hour, Since: time.Now(), Patience: time.Hour,
	}
	for range 2 {
		if _, err := gate.DialContext(t.Context(), member); !errors.Is(err, ErrNotRunYet) {
			t.Fatalf("dialing a member that has not run: %v, want ErrNotRunYet", err)
		}
	}
	if n := wire.Connections(); n != 0 {
		t.Fatalf("%d connections reached the member that has not run", n)
	}
	if n := asked.Load(); n != 1 {
		t.Fatalf("the leases were read %d times within Recheck, want once", n)
	}
	conn, err := gate.DialContext(t.Context(), wire.Addr)
	if err != nil {
		t.Fatalf("a host that is no member's: %v", err)
	}
	_ = conn.Close()
	if n := asked.Load(); n != 1 {
		t.Fatalf("the leases were read for a host that is no member's")
	}

	hasRun.Store(true)
	gate.Recheck = 0
	for range 2 {
		conn, err := gate.DialContext(t.Context(), member)
		if err != nil {
			t.Fatalf("dialing a member that ran: %v", err)
		}
		_ = conn.Close()
	}
	if n := asked.Load(); n != 2 {
		t.Fatalf("the leases were read %d times, want once more and never again for a member that ran", n)
	}
}

// The gate spares the DNS a question, it must not cut a member off: when the leases cannot be read, and
// once its patience is over, members are dialed whether they ran or not.
func TestAMemberIsDialedWhenTheLeasesDoNotReadOrThePatienceIsOver(t *testing.T) {
	member := tripwire.New(t).Addr
	for name, gate := range map[string]*Gate{
		"leases do not read": {
			Ran:     func(context.Context, []string) ([]string, error) { return nil, errors.New("apiserver unavailable") },
			Recheck: time.Hour, Since: time.Now(), Patience: time.Hour,
		},
		"patience over": {
			Ran:   func(context.Context, []string) ([]string, error) { return nil, nil },
			Since: time.Now().Add(-time.Hour), Patience: time.Minute,
		},
	} {
		gate.Members = map[string]string{member: "etcd-main-1"}
		for range 2 {
			conn, err := gate.DialContext(t.Context(), member)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			_ = conn.Close()
		}
	}
}
