package ignoredflags_test

import (
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
	"github.com/spf13/pflag"

	"github.com/gardener-etcd/gardener-etcd/pkg/ignoredflags"
)

// Ignored flags parse with their upstream types (a bool also without a value, a malformed duration
// fails), only the given ones are reported, in registration order, and Log writes them in one line.
func TestGivenFlagsAreReportedOnce(t *testing.T) {
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	s := ignoredflags.New(fs)
	s.String("a-dir", "why a")
	s.Bool("a-switch", "why b")
	s.Duration("a-timeout", "why c")
	s.Int64("a-quota", "why d")
	if got := s.Given(); got != nil {
		t.Fatalf("before parsing: %v, want none", got)
	}
	if err := fs.Parse([]string{"--a-quota=8", "--a-switch", "--a-dir=/tmp/x"}); err != nil {
		t.Fatal(err)
	}
	want := []ignoredflags.Flag{{Name: "a-dir", Value: "/tmp/x", Why: "why a"}, {Name: "a-switch", Value: "true", Why: "why b"}, {Name: "a-quota", Value: "8", Why: "why d"}}
	got := s.Given()
	if len(got) != len(want) {
		t.Fatalf("given %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("given[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}

	var lines []string
	log := funcr.New(func(_, args string) { lines = append(lines, args) }, funcr.Options{})
	ignoredflags.Log(log, got)
	ignoredflags.Log(log, nil)
	if len(lines) != 1 || !strings.Contains(lines[0], "--a-dir=/tmp/x: why a") || !strings.Contains(lines[0], "--a-quota=8: why d") {
		t.Errorf("log lines %q, want one naming every given flag and its reason", lines)
	}

	bad := pflag.NewFlagSet("test", pflag.ContinueOnError)
	ignoredflags.New(bad).Duration("a-timeout", "why")
	if err := bad.Parse([]string{"--a-timeout=soon"}); err == nil {
		t.Error("a malformed duration parsed")
	}
}
