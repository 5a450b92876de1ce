package etcdopstask

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// A sidecar's long answer is cut before it reaches an event (whose note the API limits to 1 KiB), at a rune
// boundary and saying so; a short one is kept as it is.
func TestBoundedMessage(t *testing.T) {
	if got := boundedMessage("short"); got != "short" {
		t.Fatalf("boundedMessage(short) = %q", got)
	}
	long := strings.Repeat("ä", 1000) // 2 bytes each
	got := boundedMessage(long)
	if len(got) > 1024 || !utf8.ValidString(got) || !strings.HasSuffix(got, "(cut)") {
		t.Fatalf("boundedMessage of %d bytes = %d bytes, valid UTF-8 %v: %q…", len(long), len(got), utf8.ValidString(got), got[:20])
	}
}
