// Package freeport hands out TCP ports on 127.0.0.1 for test servers that must be told their port before
// they listen (etcd members whose URLs go into each other's initial cluster, child processes).
//
// Probing with a listener on port 0 and closing it is racy on a busy machine: the kernel hands the same
// ephemeral port to the next connection or `:0` listener of any process, and `go test ./...` runs many
// test binaries at once. So ports come from below the ephemeral range, where the kernel never assigns
// them by itself, and each is reserved across processes with an flock on a file in the temp directory,
// held until the test binary exits (the kernel releases it even after a crash).
package freeport

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
)

const (
	// The range sits between the well-known ports of common services and Linux's default ephemeral range
	// (32768–60999).
	firstPort = 20000
	lastPort  = 32767
	attempts  = 200
)

var (
	mu sync.Mutex
	// held keeps the lock files of this process open: closing one would release its reservation.
	held = map[int]*os.File{}
)

// Port returns a port on 127.0.0.1 that is free and reserved for this test binary.
func Port(t testing.TB) int {
	t.Helper()
	port, err := Reserve()
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// Addr returns "127.0.0.1:<port>" for a reserved port.
func Addr(t testing.TB) string {
	t.Helper()
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(Port(t)))
}

// Reserve is Port for code without a testing.TB.
func Reserve() (int, error) {
	dir := filepath.Join(os.TempDir(), "gardener-etcd-test-ports")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, fmt.Errorf("creating the port lock directory: %w", err)
	}
	mu.Lock()
	defer mu.Unlock()
	for range attempts {
		port := firstPort + rand.IntN(lastPort-firstPort+1)
		if held[port] != nil {
			continue
		}
		lock, err := tryLock(filepath.Join(dir, strconv.Itoa(port)))
		if err != nil {
			return 0, err
		}
		if lock == nil {
			continue // reserved by another test binary
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			_ = lock.Close() // in use by something that does not take our locks
			continue
		}
		_ = l.Close()
		held[port] = lock
		return port, nil
	}
	return 0, errors.New("no free port found in 20000-32767 after 200 attempts")
}

// tryLock returns the open, exclusively locked file, or nil when another process holds the lock.
func tryLock(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening port lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, nil
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return f, nil
}
