package snapshotter

import (
	"context"
	"net"
	"strings"
	"time"

	"google.golang.org/grpc"
)

// A delta watch that keeps up receives one response per revision, each on its own: at ten thousand writes a
// second that is ten thousand wake-ups of gRPC's reader, each a poll, a read and a hand-off between
// goroutines, on the CPUs that the member being backed up also serves its writes on. Nothing needs the
// events that fast (they are stored every delta period), so the delta watch has a connection of its own
// whose reads, once they have taken what had arrived, wait for more to gather: up to watchReadInterval,
// less when the watch receives so much that watchGatherBytes arrive sooner. Its flow-control windows are
// fixed, which turns off gRPC's bandwidth estimation; that sends a ping on the first data after each ping
// answer, which on a connection as quick as loopback is about one per response.
const (
	watchReadInterval = 20 * time.Millisecond
	// watchGatherBytes is about what a wait lets arrive, at the rate the watch received at before it. It
	// stays below what the kernel buffers for a socket that is not read (Linux starts a TCP socket with
	// 128 KiB, about half of it window), so that a wait does not hold etcd's sends back: etcd takes a
	// watcher whose responses back up for a slow one and serves it from its database, at more cost.
	watchGatherBytes = 64 << 10
	// watchWindow is the flow-control window of the watch's stream and connection: what etcd may send
	// before the watch has read it, 4 MiB (gRPC raises it for a single larger response).
	watchWindow = 4 << 20
)

// WatchDialOptions are the gRPC options of the delta watch's own etcd client (Options.WatchClient): reads
// gathered (watchReadInterval, watchGatherBytes), fixed flow-control windows. Any other call on this client
// would wait for its answer as the watch does; the snapshotter makes none.
func WatchDialOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithInitialWindowSize(watchWindow),
		grpc.WithInitialConnWindowSize(watchWindow),
		grpc.WithContextDialer(dialGathering),
	}
}

// dialGathering dials an address as clientv3 hands it to gRPC (host:port, or unix:<path> and
// unix://<absolute path> for etcd's unix endpoints) and gathers the connection's reads.
func dialGathering(ctx context.Context, addr string) (net.Conn, error) {
	network, address := "tcp", addr
	if path, ok := strings.CutPrefix(addr, "unix:"); ok {
		network, address = "unix", strings.TrimPrefix(path, "//")
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	return newGatheringConn(conn, time.Now, time.Sleep), nil
}

// gatheringConn is a connection whose reads, after one that found less than half its buffer's worth (the
// socket was drained), wait until the next wait has passed since that read: what arrives meanwhile is
// read at once. A read that filled half its buffer or more may have left more behind, and the next read
// follows at once. Only gRPC's reader goroutine reads a connection (after TLS's handshake), so the fields
// need no lock.
type gatheringConn struct {
	net.Conn
	now   func() time.Time
	sleep func(time.Duration)

	// drained tells whether the last read drained the socket, at lastDrained.
	drained     bool
	lastDrained time.Time
	// wait is how long after a drained read the next one starts.
	wait time.Duration
	// gathered is what the reads since lastDrained took.
	gathered int
}

func newGatheringConn(conn net.Conn, now func() time.Time, sleep func(time.Duration)) *gatheringConn {
	return &gatheringConn{Conn: conn, now: now, sleep: sleep, lastDrained: now()}
}

func (c *gatheringConn) Read(p []byte) (int, error) {
	if c.drained {
		if wait := c.wait - c.now().Sub(c.lastDrained); wait > 0 {
			c.sleep(wait)
		}
	}
	n, err := c.Conn.Read(p)
	c.gathered += n
	c.drained = n < len(p)/2
	if c.drained {
		now := c.now()
		c.wait = gatherWait(now.Sub(c.lastDrained), c.gathered)
		c.gathered, c.lastDrained = 0, now
	}
	return n, err
}

// gatherWait is the time in which watchGatherBytes arrive at the rate of bytes in elapsed, at most
// watchReadInterval.
func gatherWait(elapsed time.Duration, bytes int) time.Duration {
	if bytes <= 0 {
		return watchReadInterval
	}
	if wait := float64(elapsed) * watchGatherBytes / float64(bytes); wait < float64(watchReadInterval) {
		return time.Duration(wait)
	}
	return watchReadInterval
}
