package seednet

import (
	"context"
	"net"
	"net/netip"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"golang.org/x/sys/unix"
)

// listenIn opens a TCP listener inside the pod's network namespace: the socket stays in the namespace
// it was created in after the thread switches back.
func listenIn(t *testing.T, p *Namespace) net.Listener {
	t.Helper()
	runtime.LockOSThread()
	host, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(host)
	pod, err := unix.Open(p.NetNSPath, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(pod)
	if err := unix.Setns(pod, unix.CLONE_NEWNET); err != nil {
		t.Fatal(err)
	}
	l, listenErr := net.Listen("tcp", ":8080")
	if err := unix.Setns(host, unix.CLONE_NEWNET); err != nil {
		// The thread stays locked and dies with the goroutine rather than serving others in the pod.
		t.Fatalf("returning to the host namespace: %v", err)
	}
	runtime.UnlockOSThread()
	if listenErr != nil {
		t.Fatal(listenErr)
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("x"))
			_ = c.Close()
		}
	}()
	return l
}

func dial(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
	_, err = c.Read(make([]byte, 1))
	return err
}

// TestReusedAddressReachableAtOnce deletes a pod and adds one that gets the same address: the host must
// reach the new pod immediately, not after its stale neighbour entry for the address expires.
func TestReusedAddressReachableAtOnce(t *testing.T) {
	if testing.Short() || os.Geteuid() != 0 {
		t.Skip("needs root (network namespaces)")
	}
	ctx := context.Background()
	prefix := "lt" + time.Now().Format("050405")[:5]
	n, err := Create(ctx, testr.New(t), prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := Cleanup(context.Background(), prefix); err != nil {
			t.Error(err)
		}
		if netns, links := Leftovers(prefix); len(netns)+len(links) > 0 {
			t.Errorf("left behind: %v %v", netns, links)
		}
	})
	// A pod that stays keeps the bridge's carrier up: a bridge without ports loses it, and the kernel
	// flushes the neighbour entries of a device whose carrier goes down, which would hide the problem.
	if _, err := n.AddNamespace(ctx, "bystander"); err != nil {
		t.Fatal(err)
	}
	first, err := n.AddNamespace(ctx, "first")
	if err != nil {
		t.Fatal(err)
	}
	l := listenIn(t, first)
	addr := net.JoinHostPort(first.IP.String(), "8080")
	if err := dial(addr); err != nil {
		t.Fatalf("first pod: %v", err)
	}
	_ = l.Close()
	if err := n.RemoveNamespace(ctx, first); err != nil {
		t.Fatal(err)
	}
	second, err := n.AddNamespace(ctx, "second")
	if err != nil {
		t.Fatal(err)
	}
	if second.IP != first.IP {
		t.Fatalf("second pod got %s, want the reused %s", second.IP, first.IP)
	}
	defer listenIn(t, second).Close()
	if err := dial(addr); err != nil {
		t.Fatalf("pod with the reused address unreachable: %v", err)
	}
	if err := n.RemoveNamespace(ctx, second); err != nil {
		t.Fatal(err)
	}
	if err := n.Destroy(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestMAC(t *testing.T) {
	a, b := MAC(mustAddr("10.234.7.2")), MAC(mustAddr("10.234.7.3"))
	if a != "02:4c:0a:ea:07:02" || a == b {
		t.Fatalf("MAC = %s, %s", a, b)
	}
	hw, err := net.ParseMAC(a)
	if err != nil || hw[0]&1 != 0 || hw[0]&2 == 0 {
		t.Fatalf("%s is not a locally administered unicast address (%v)", a, err)
	}
}

func mustAddr(s string) netip.Addr { return netip.MustParseAddr(s) }
