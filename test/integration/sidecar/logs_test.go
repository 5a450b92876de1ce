package sidecar

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// sidecarLog passes a pod's sidecar log lines on to the test and keeps them, so that a test can tell why
// a member did not start (e.g. which error refused its initialization), not only that it did not.
type sidecarLog struct {
	t *testing.T

	mu    sync.Mutex
	lines []string
}

// Helper and Log implement testr.TestingT.
func (l *sidecarLog) Helper() { l.t.Helper() }

func (l *sidecarLog) Log(args ...any) {
	l.t.Log(args...)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprint(args...))
}

// containing returns the lines holding all of parts.
func (l *sidecarLog) containing(parts ...string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range l.lines {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			out = append(out, line)
		}
	}
	return out
}
