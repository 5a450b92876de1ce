// Package prometheusrules checks and unit-tests the alerting rules of the druid chart
// (charts/etcd-druid/files/prometheus-rules.yaml) with promtool, the pinned bin/promtool of `make tools`.
package prometheusrules

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gardener-etcd/gardener-etcd/test/childproc"
)

// rulesFile is the one copy of the rules; the chart's PrometheusRule embeds it.
var rulesFile = filepath.Join("..", "..", "charts", "etcd-druid", "files", "prometheus-rules.yaml")

// promtool finds bin/promtool (or $PROMTOOL); under -short a missing binary skips, otherwise it fails.
func promtool(t *testing.T) string {
	t.Helper()
	bin, err := childproc.FindBinary("promtool", "PROMTOOL")
	if err != nil {
		childproc.SkipIfShortAndMissing(t, "promtool", err)
		t.Fatal(err)
	}
	return bin
}

func run(t *testing.T, bin string, args ...string) {
	t.Helper()
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %v: %v\n%s", args, err, out)
	}
	t.Logf("promtool %v:\n%s", args, out)
}

// TestCheckRules: the rules parse, their expressions are valid PromQL, and promtool's linter has no
// finding (duplicate rules, …).
func TestCheckRules(t *testing.T) {
	run(t, promtool(t), "check", "rules", "--lint-fatal", rulesFile)
}

// TestRules: every alert fires on its input series at the expected time and not before, and clears with
// its cause (testdata/*.yaml, `promtool test rules`).
func TestRules(t *testing.T) {
	bin := promtool(t)
	files, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no rule tests in testdata: %v", err)
	}
	run(t, bin, append([]string{"test", "rules"}, files...)...)
}
