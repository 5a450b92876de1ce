package snapshotter

import (
	"bytes"
	"net"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// scriptedConn answers each Read with the next of its chunks.
type scriptedConn struct {
	net.Conn
	chunks [][]byte
}

func (c *scriptedConn) Read(p []byte) (int, error) {
	n := copy(p, c.chunks[0])
	c.chunks = c.chunks[1:]
	return n, nil
}

// The wait after a read that drained the socket is what watchGatherBytes take to arrive at the rate of
// the reads before it, at most watchReadInterval; a read that filled half its buffer or more waits for
// nothing. The bytes pass unchanged.
func TestGatheringConnWaitsForAboutWatchGatherBytes(t *testing.T) {
	const KiB = 1 << 10
	if watchGatherBytes != 64*KiB || watchReadInterval != 20*time.Millisecond {
		t.Fatalf("the figures below assume 64 KiB and 20 ms, not %d bytes and %s", watchGatherBytes, watchReadInterval)
	}
	var chunks [][]byte
	var want []byte
	for i, size := range []int{1 * KiB, 256 * KiB, 32 * KiB, 512 * KiB, 128 * KiB, 100} {
		chunk := bytes.Repeat([]byte{byte('a' + i)}, size)
		chunks, want = append(chunks, chunk), append(want, chunk...)
	}
	clock := time.Unix(0, 0)
	var slept []time.Duration
	conn := newGatheringConn(&scriptedConn{chunks: chunks}, func() time.Time { return clock },
		func(d time.Duration) { slept = append(slept, d); clock = clock.Add(d) })
	buf := make([]byte, 1024*KiB) // a read of less than 512 KiB drained the socket
	var got []byte
	read := func(after time.Duration) {
		t.Helper()
		clock = clock.Add(after)
		n, err := conn.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, buf[:n]...)
	}
	ms := time.Millisecond

	read(10 * ms) // 1 KiB in 10 ms: 64 KiB would take longer than the interval
	read(5 * ms)  // waits 15 ms more; 256 KiB in 20 ms
	read(0)       // waits 5 ms; 32 KiB in 5 ms
	read(0)       // waits 10 ms; 512 KiB, half the buffer: more may wait
	read(0)       // at once; with the last read 640 KiB in 10 ms
	read(0)       // waits 1 ms
	if want := []time.Duration{15 * ms, 5 * ms, 10 * ms, 1 * ms}; !slices.Equal(slept, want) {
		t.Fatalf("slept %v, want %v", slept, want)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes that differ from the %d sent", len(got), len(want))
	}
}

// clientv3 hands gRPC host:port for http(s) endpoints and unix://<absolute path> for unix:///… ones;
// both are dialed, and both connections gather their reads.
func TestDialGatheringReachesTCPAndUnixEndpoints(t *testing.T) {
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	unix, err := net.Listen("unix", filepath.Join(t.TempDir(), "etcd.sock"))
	if err != nil {
		t.Fatal(err)
	}
	for addr, l := range map[string]net.Listener{tcp.Addr().String(): tcp, "unix://" + unix.Addr().String(): unix} {
		defer l.Close()
		accepted := make(chan net.Conn, 1)
		go func() {
			c, err := l.Accept()
			if err == nil {
				accepted <- c
			}
			close(accepted)
		}()
		conn, err := dialGathering(t.Context(), addr)
		if err != nil {
			t.Fatalf("dialing %s: %v", addr, err)
		}
		defer conn.Close()
		if _, ok := conn.(*gatheringConn); !ok {
			t.Fatalf("dialing %s gave a %T, not a gatheringConn", addr, conn)
		}
		server := <-accepted
		if server == nil {
			t.Fatalf("%s accepted nothing", addr)
		}
		defer server.Close()
		if _, err := server.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
		b := make([]byte, 1)
		if _, err := conn.Read(b); err != nil || b[0] != 'x' {
			t.Fatalf("reading from %s: %q, %v", addr, b, err)
		}
	}
}
