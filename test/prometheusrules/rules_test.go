// Package prometheusrules checks and unit-tests the alerting rules of the druid chart
// (charts/etcd-druid/files/prometheus-rules.yaml) with promtool, the pinned bin/promtool of `make tools`.
package prometheusrules

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gardener-etcd/gardener-etcd/test/support/childproc"
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

// TestRecordedScrapes: scrapes recorded by Recorder become a promtool unit test that sees an alert fire
// and clear where the scraped series say it must (the e2e suite evaluates druid's real /metrics this way).
func TestRecordedScrapes(t *testing.T) {
	bin := promtool(t)
	rules, err := filepath.Abs(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	const condition = `# TYPE etcddruid_etcd_condition gauge
etcddruid_etcd_condition{condition="BackupReady",name="etcd-main",namespace="shoot--a",reason="%s",status="%s"} 1
etcddruid_etcd_condition{condition="Ready",name="etcd-main",namespace="shoot--a",reason="Quorate",status="True"} 1
etcddruid_etcd_condition{condition="BackupReady",name="etcd-main",namespace="shoot--other",reason="BackupSucceeded",status="True"} 1
`
	r := &Recorder{
		Interval:    5 * time.Second,
		Keep:        func(_ string, labels map[string]string) bool { return labels["namespace"] == "shoot--a" },
		ExtraLabels: map[string]string{"pod": "druid-a"},
	}
	start := time.Unix(1_700_000_000, 0)
	// BackupReady True for steps 0–4, False for 5–20, True again from 21; a scrape a little late or early
	// lands on its step.
	for step := range 26 {
		reason, status := "BackupSucceeded", "True"
		if step >= 5 && step <= 20 {
			reason, status = "BackupFailed", "False"
		}
		jitter := time.Duration(step%3-1) * time.Second
		if err := r.Scrape(start.Add(time.Duration(step)*5*time.Second+jitter), strings.NewReader(fmt.Sprintf(condition, reason, status))); err != nil {
			t.Fatal(err)
		}
	}
	if got := r.Step(start.Add(86 * time.Second)); got != 17 {
		t.Fatalf("86s after the first scrape is step %d, want 17", got)
	}
	firing := []map[string]string{{"severity": "critical", "namespace": "shoot--a", "name": "etcd-main"}}
	file, err := r.UnitTest(rules, []AlertCheck{
		{Step: 4, Alert: "EtcdBackupNotReady"},
		{Step: 16, Alert: "EtcdBackupNotReady"}, // False for 55s: pending
		{Step: 17, Alert: "EtcdBackupNotReady", Firing: firing},
		{Step: 20, Alert: "EtcdBackupNotReady", Firing: firing},
		{Step: 21, Alert: "EtcdBackupNotReady"},
		{Step: 25, Alert: "EtcdQuorumLost"},
	})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "recorded.yaml")
	if err := os.WriteFile(path, file, 0o600); err != nil {
		t.Fatal(err)
	}
	run(t, bin, "test", "rules", path)

	// The same recording with the alert expected one step early must fail: the test is not vacuous.
	early, err := r.UnitTest(rules, []AlertCheck{{Step: 16, Alert: "EtcdBackupNotReady", Firing: firing}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, early, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "test", "rules", path).CombinedOutput(); err == nil {
		t.Fatalf("promtool accepted the alert firing after 55s of a 1m for:\n%s", out)
	}
}
