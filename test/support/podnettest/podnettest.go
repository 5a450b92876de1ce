// Package podnettest gives tests a caller in another pod: a network namespace of its own (made with
// pkg/localseed/seednet, as the local seed makes its nodes) whose connections reach the host over a bridge and
// arrive from the pod's address, not from loopback. Servers that serve some endpoints to callers inside
// their own pod only (loopback) are tested with it honestly: a second loopback address or the host's own
// interface address would still be the same network namespace. It needs root.
package podnettest

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"golang.org/x/sys/unix"

	"github.com/gardener-etcd/gardener-etcd/pkg/localseed/seednet"
)

// Caller is a pod whose connections tests open.
type Caller struct {
	// Host is the host's address on the bridge: a server listening there is reachable from the caller.
	Host netip.Addr
	// IP is the caller's own address, the remote address servers see.
	IP  netip.Addr
	pod *seednet.Namespace
}

// SkipUnlessPossible skips t under -short and when it does not run as root (network namespaces).
func SkipUnlessPossible(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("creates a network namespace: not with -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root (network namespaces)")
	}
}

// NewCaller creates a bridge and one pod on it; both are removed when the test ends.
func NewCaller(t *testing.T) *Caller {
	t.Helper()
	SkipUnlessPossible(t)
	ctx := context.Background()
	prefix := fmt.Sprintf("pt%05d", time.Now().UnixNano()/1000%100000)
	n, err := seednet.Create(ctx, testr.New(t), prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := seednet.Cleanup(context.Background(), prefix); err != nil {
			t.Error(err)
		}
		if netns, links := seednet.Leftovers(prefix); len(netns)+len(links) > 0 {
			t.Errorf("left behind: %v %v", netns, links)
		}
	})
	p, err := n.AddNamespace(ctx, "caller")
	if err != nil {
		t.Fatal(err)
	}
	return &Caller{Host: n.Gateway, IP: p.IP, pod: p}
}

// FromNamespace is a caller in a namespace made elsewhere, e.g. on a local seed's bridge
// (localseed.Seed.AddCallerNamespace); host is the host's address on that bridge.
func FromNamespace(ns *seednet.Namespace, host netip.Addr) *Caller {
	return &Caller{Host: host, IP: ns.IP, pod: ns}
}

// DialContext opens a connection from inside the caller's network namespace: the socket is created there
// and stays there after the thread returns to the host's namespace.
func (c *Caller) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	runtime.LockOSThread()
	host, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	defer unix.Close(host)
	pod, err := unix.Open(c.pod.NetNSPath, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	defer unix.Close(pod)
	if err := unix.Setns(pod, unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	conn, dialErr := (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, network, addr)
	if err := unix.Setns(host, unix.CLONE_NEWNET); err != nil {
		// The thread stays locked and ends with the goroutine rather than serving others in the pod.
		if conn != nil {
			conn.Close()
		}
		return nil, fmt.Errorf("returning to the host's network namespace: %w", err)
	}
	runtime.UnlockOSThread()
	return conn, dialErr
}

// HTTPClient is a client whose requests come from the caller; tlsConfig is used for https URLs.
func (c *Caller) HTTPClient(tlsConfig *tls.Config) *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: c.DialContext, TLSClientConfig: tlsConfig}}
}
