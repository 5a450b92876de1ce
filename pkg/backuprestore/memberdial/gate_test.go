package memberdial

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// listener counts the connections it accepts.
func listener(t *testing.T) (port string, accepted *atomic.Int32) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	accepted = &atomic.Int32{}
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			_ = conn.Close()
		}
	}()
	_, port, _ = net.SplitHostPort(l.Addr().String())
	return port, accepted
}

// A member is dialed once its lease shows it ran, never before; the answer that it has not stands for
// Recheck; other hosts are dialed without asking.
func TestAMemberIsDialedOnlyOnceItRan(t *testing.T) {
	port, accepted := listener(t)
	var asked atomic.Int32
	var hasRun atomic.Bool
	gate := &Gate{
		Members: map[string]string{"localhost": "etcd-main-1"},
		Ran: func(_ context.Context, names []string) ([]string, error) {
			asked.Add(1)
			if hasRun.Load() {
				return names, nil
			}
			return nil, nil
		},
		Recheck: time.Hour,
	}
	member := net.JoinHostPort("localhost", port)
	for range 2 {
		if _, err := gate.DialContext(t.Context(), member); !errors.Is(err, ErrNotRunYet) {
			t.Fatalf("dialing a member that has not run: %v, want ErrNotRunYet", err)
		}
	}
	if n := accepted.Load(); n != 0 {
		t.Fatalf("%d connections reached the member that has not run", n)
	}
	if n := asked.Load(); n != 1 {
		t.Fatalf("the leases were read %d times within Recheck, want once", n)
	}
	conn, err := gate.DialContext(t.Context(), net.JoinHostPort("127.0.0.1", port))
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

// When the leases cannot be read the member is dialed: the gate spares the DNS a question, it must not cut a
// member off.
func TestAMemberIsDialedWhenTheLeasesDoNotRead(t *testing.T) {
	port, _ := listener(t)
	gate := &Gate{
		Members: map[string]string{"localhost": "etcd-main-1"},
		Ran:     func(context.Context, []string) ([]string, error) { return nil, errors.New("apiserver unavailable") },
	}
	conn, err := gate.DialContext(t.Context(), net.JoinHostPort("localhost", port))
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.Close()
}
