// Package tripwire stands in for an address that must not be dialed, or that must be: a TCP listener that
// counts the connections it is offered and closes them.
package tripwire

import (
	"net"
	"sync/atomic"
	"testing"
)

// Wire is a listening address with the count of connections offered to it.
type Wire struct {
	// Addr is "127.0.0.1:<port>".
	Addr  string
	conns atomic.Int32
}

// New listens on a free loopback port until the test ends.
func New(t testing.TB) *Wire {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	w := &Wire{Addr: l.Addr().String()}
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			w.conns.Add(1)
			_ = conn.Close()
		}
	}()
	t.Cleanup(func() { _ = l.Close() })
	return w
}

// URL is Addr as a plain HTTP URL.
func (w *Wire) URL() string { return "http://" + w.Addr }

// Connections is how many connections were offered so far.
func (w *Wire) Connections() int32 { return w.conns.Load() }
