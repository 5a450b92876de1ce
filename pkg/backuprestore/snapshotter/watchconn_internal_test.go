package snapshotter

import (
	"bytes"
	"net"
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

func TestGatheringConnWaitsOnlyAfterAReadThatDrainedTheSocket(t *testing.T) {
	clock := time.Unix(0, 0)
	var slept []time.Duration
	conn := &gatheringConn{
		Conn:     &scriptedConn{chunks: [][]byte{bytes.Repeat([]byte("a"), 10), bytes.Repeat([]byte("b"), 60), []byte("c"), []byte("d"), []byte("e")}},
		interval: 20 * time.Millisecond,
		now:      func() time.Time { return clock },
		sleep:    func(d time.Duration) { slept = append(slept, d); clock = clock.Add(d) },
	}
	buf := make([]byte, 100)
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

	read(0) // the first read does not wait; 10 of 100 bytes: the socket was drained
	read(5 * time.Millisecond)
	if want := []time.Duration{15 * time.Millisecond}; !slices.Equal(slept, want) {
		t.Fatalf("after a drained read 5ms ago the next read slept %v, want %v", slept, want)
	}
	read(0) // after 60 of 100 bytes there may be more: no wait
	if len(slept) != 1 {
		t.Fatalf("a read after one that filled more than half its buffer slept %v", slept[1:])
	}
	read(25 * time.Millisecond) // drained, but the interval has passed already
	if len(slept) != 1 {
		t.Fatalf("a read after the interval had passed slept %v", slept[1:])
	}
	read(0)
	if want := []time.Duration{15 * time.Millisecond, 20 * time.Millisecond}; !slices.Equal(slept, want) {
		t.Fatalf("slept %v, want %v", slept, want)
	}
	if want := "aaaaaaaaaa" + string(bytes.Repeat([]byte("b"), 60)) + "cde"; string(got) != want {
		t.Fatalf("read %q, want %q", got, want)
	}
}
