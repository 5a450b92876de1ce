package localseed

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLogTailKeepsTheLastWholeLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubelet.log")
	if err := os.WriteFile(path, []byte("first line\nsecond line\nthird line\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := logTail(path, 16); got != "third line\n" {
		t.Fatalf("logTail(16) = %q, want the last whole line", got)
	}
	if got := logTail(path, 1000); got != "first line\nsecond line\nthird line\n" {
		t.Fatalf("logTail(1000) = %q, want the whole log", got)
	}
	if got := logTail(filepath.Join(t.TempDir(), "missing.log"), 100); !strings.HasPrefix(got, "(no log: ") {
		t.Fatalf("logTail of a missing file = %q", got)
	}
}
