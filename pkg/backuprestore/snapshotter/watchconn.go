package snapshotter

import (
	"context"
	"net"
	"time"

	"google.golang.org/grpc"
)

// A delta watch that keeps up receives one response per revision, each on its own: at ten thousand writes a
// second that is ten thousand wake-ups of gRPC's reader, each a poll, a read and a hand-off between
// goroutines, on the CPUs that the member being backed up also serves its writes on. Nothing needs the
// events that fast (they are stored every delta period), so the delta watch has a connection of its own
// that reads at most every watchReadInterval once it has read everything there was: the responses of that
// interval come with one read. Its flow-control windows are fixed, which turns off gRPC's bandwidth
// estimation; that sends a ping for about every response on a connection as quick as loopback.
const (
	watchReadInterval = 20 * time.Millisecond
	// watchWindow is the flow-control window of the watch's stream and connection: what etcd may send
	// before the watch reads it. It bounds a catch-up of large values to about a window per read interval
	// (200 MiB/s), and what waits unread in gRPC's buffers to 4 MiB (bandwidth estimation let the window
	// grow to 16 MiB).
	watchWindow = 4 << 20
)

// WatchDialOptions are the gRPC options of the delta watch's own etcd client (Options.WatchClient):
// reads gathered per watchReadInterval, fixed flow-control windows. The client reaches etcd over TCP, as
// the sidecar's --endpoints do. Any other call on this client would wait up to watchReadInterval for each
// answer; the snapshotter makes none.
func WatchDialOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithInitialWindowSize(watchWindow),
		grpc.WithInitialConnWindowSize(watchWindow),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			var d net.Dialer
			conn, err := d.DialContext(ctx, "tcp", addr)
			if err != nil {
				return nil, err
			}
			return &gatheringConn{Conn: conn, interval: watchReadInterval, now: time.Now, sleep: time.Sleep}, nil
		}),
	}
}

// gatheringConn is a connection whose reads, after one that found less than half its buffer's worth
// (the socket was drained), wait until interval has passed since that read: what arrives meanwhile is
// read at once. A read that filled half its buffer or more may have left more behind, and the next
// read follows at once. Only gRPC's reader goroutine reads a connection, so the fields need no lock.
type gatheringConn struct {
	net.Conn
	interval time.Duration
	now      func() time.Time
	sleep    func(time.Duration)

	drained  bool
	lastRead time.Time
}

func (c *gatheringConn) Read(p []byte) (int, error) {
	if c.drained {
		if wait := c.interval - c.now().Sub(c.lastRead); wait > 0 {
			c.sleep(wait)
		}
	}
	n, err := c.Conn.Read(p)
	c.drained, c.lastRead = n < len(p)/2, c.now()
	return n, err
}
