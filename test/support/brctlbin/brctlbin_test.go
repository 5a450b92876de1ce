package brctlbin

import (
	"fmt"
	"strings"
	"testing"
)

// fatalRecorder records a Fatalf instead of ending the test.
type fatalRecorder struct {
	testing.TB
	fatal string
}

func (r *fatalRecorder) Helper() {}

func (r *fatalRecorder) Fatalf(format string, args ...any) { r.fatal = fmt.Sprintf(format, args...) }

// Without upstream's binary a comparison fails, saying how to build it; it never skips.
func TestUpstreamMissingFailsNamingTheMakeTarget(t *testing.T) {
	t.Setenv(UpstreamEnv, "")
	t.Setenv("KUBEBUILDER_ASSETS", t.TempDir())
	r := &fatalRecorder{TB: t}
	Upstream(r)
	if !strings.Contains(r.fatal, "make tools-upstream") || !strings.Contains(r.fatal, "upstream-etcdbrctl") {
		t.Fatalf("want a failure naming upstream-etcdbrctl and `make tools-upstream`, got %q", r.fatal)
	}
	if r.Skipped() {
		t.Fatal("skipped")
	}
}
