package freeport

import (
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

const childEnv = "GARDENER_ETCD_FREEPORT_CHILD"

// Ports are distinct within a process, bindable, and outside the kernel's ephemeral range.
func TestPortsAreDistinctAndBindable(t *testing.T) {
	seen := map[int]bool{}
	for range 50 {
		p := Port(t)
		if seen[p] {
			t.Fatalf("port %d handed out twice", p)
		}
		seen[p] = true
		if p < firstPort || p > lastPort {
			t.Fatalf("port %d outside %d-%d", p, firstPort, lastPort)
		}
	}
	for p := range seen {
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			t.Fatalf("reserved port %d not bindable: %v", p, err)
		}
		_ = l.Close()
	}
}

// A port reserved by one process is never handed to another while the first one lives.
func TestReservationsHoldAcrossProcesses(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		var out []string
		for range 200 {
			out = append(out, strconv.Itoa(Port(t)))
		}
		os.Stdout.WriteString(strings.Join(out, " ") + "\n")
		return
	}
	mine := map[int]bool{}
	for range 200 {
		mine[Port(t)] = true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestReservationsHoldAcrossProcesses$")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	lines := strings.Fields(strings.Split(string(out), "\nPASS")[0])
	if len(lines) < 200 {
		t.Fatalf("child printed %d ports:\n%s", len(lines), out)
	}
	for _, field := range lines[:200] {
		p, err := strconv.Atoi(field)
		if err != nil {
			t.Fatalf("child output %q: %v", field, err)
		}
		if mine[p] {
			t.Fatalf("port %d reserved by this process was handed to the child", p)
		}
	}
}
