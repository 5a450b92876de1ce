// Package brctlbin provides the two etcdbrctl binaries the benchmarks compare in the same run: ours,
// built from the checkout, and upstream etcd-backup-restore's, built from its Go module by
// `make tools-upstream` (bin/upstream-etcdbrctl). Both run as processes of their own, started and
// measured the same way (benchproc.Proc), so that a ratio between them is one of binaries, not of
// harnesses.
package brctlbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gardener-etcd/gardener-etcd/test/support/childproc"
)

// UpstreamEnv points at another upstream etcdbrctl than bin/upstream-etcdbrctl.
const UpstreamEnv = "UPSTREAM_ETCDBRCTL_BIN"

// UpstreamVersion is the release `make tools-upstream` builds (hack/tools/upstream-etcd-backup-restore).
const UpstreamVersion = "v0.40.0"

// Upstream returns upstream's etcdbrctl. A benchmark that compares with it fails without it, never
// skips: a run that printed only our side would pass for a comparison.
func Upstream(tb testing.TB) string {
	tb.Helper()
	bin, err := childproc.FindBinary("upstream-etcdbrctl", UpstreamEnv)
	if err != nil {
		tb.Fatalf("upstream etcd-backup-restore %s: %v (it is built by `make tools-upstream`, which the bench targets run)", UpstreamVersion, err)
	}
	return bin
}

// Ours builds cmd/etcdbrctl of this checkout into a temporary directory of tb and returns its path.
func Ours(tb testing.TB) string {
	tb.Helper()
	root, err := moduleRoot()
	if err != nil {
		tb.Fatal(err)
	}
	bin := filepath.Join(tb.TempDir(), "etcdbrctl")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/etcdbrctl")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("building our etcdbrctl: %v\n%s", err, out)
	}
	return bin
}

// moduleRoot is the directory of the go.mod of the package the test runs in (this module's root).
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("not inside a Go module")
	}
	return filepath.Dir(gomod), nil
}
