package etcd

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"sigs.k8s.io/yaml"

	"github.com/gardener-etcd/gardener-etcd/test/support/childproc"
)

// ruleTestCases are the rule files the promtool tests in testdata/monitoring run on, rendered from what
// Deploy writes: <name>.test.yaml tests <name>.rules.yaml.
var ruleTestCases = []struct {
	name     string
	role     string
	class    Class
	replicas int32
	backup   bool
}{
	{"main-important-backup-1", RoleMain, ClassImportant, 1, true},
	{"main-important-backup-3", RoleMain, ClassImportant, 3, true},
	{"events-normal-1", RoleEvents, ClassNormal, 1, false},
}

// TestPrometheusRuleWithPromtool: the rules Deploy writes pass `promtool check rules --lint-fatal`, and
// every alert fires when its cause has lasted its `for`, not sooner, and clears with the cause (the
// `promtool test rules` files in testdata/monitoring).
func TestPrometheusRuleWithPromtool(t *testing.T) {
	bin, err := childproc.FindBinary("promtool", "PROMTOOL")
	if err != nil {
		childproc.SkipIfShortAndMissing(t, "promtool", err)
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, c := range ruleTestCases {
		t.Run(c.name, func(t *testing.T) {
			rules := renderRuleFile(t, dir, c.name, c.role, c.class, c.replicas, c.backup)
			test, err := os.ReadFile(filepath.Join("testdata", "monitoring", c.name+".test.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			testFile := filepath.Join(dir, c.name+".test.yaml")
			if err := os.WriteFile(testFile, test, 0o600); err != nil {
				t.Fatal(err)
			}
			promtool(t, bin, "check", "rules", "--lint-fatal", rules)
			promtool(t, bin, "test", "rules", testFile)
		})
	}
}

// TestPromtoolTestsCoverEveryRule: for every rule file, the tests of its role check each alert both firing
// and, later in the same series, cleared, and evaluate each recording rule; a rule added without a test
// fails here. (The three-member file tests only what its quorum changes; the single-member file of the
// same role tests the rest.)
func TestPromtoolTestsCoverEveryRule(t *testing.T) {
	firedAndCleared, recorded := map[string]bool{}, map[string]bool{}
	for _, c := range ruleTestCases {
		data, err := os.ReadFile(filepath.Join("testdata", "monitoring", c.name+".test.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var file promtoolTestFile
		if err := yaml.Unmarshal(data, &file); err != nil {
			t.Fatal(err)
		}
		for _, group := range file.Tests {
			fired := map[string]time.Duration{}
			for _, check := range group.AlertRuleTests {
				at := parseDuration(t, check.EvalTime)
				if first, ok := fired[check.Alertname]; len(check.ExpAlerts) > 0 && (!ok || at < first) {
					fired[check.Alertname] = at
				}
			}
			for _, check := range group.AlertRuleTests {
				if first, ok := fired[check.Alertname]; ok && len(check.ExpAlerts) == 0 && parseDuration(t, check.EvalTime) > first {
					firedAndCleared[c.role+"/"+check.Alertname] = true
				}
			}
			for _, check := range group.PromQLExprTests {
				recorded[c.role+"/"+check.Expr] = true
			}
		}
	}
	for _, c := range ruleTestCases {
		spec, err := prometheusRuleSpec(newRuleInputs(c.role, c.class, c.replicas, c.backup))
		if err != nil {
			t.Fatal(err)
		}
		for _, rule := range spec.Groups[0].Rules {
			if rule.Alert != "" && !firedAndCleared[c.role+"/"+rule.Alert] {
				t.Errorf("%s: no test of role %s sees %s fire and then clear", c.name, c.role, rule.Alert)
			}
			if rule.Record != "" && !recorded[c.role+"/"+rule.Record] {
				t.Errorf("%s: no test of role %s evaluates the recording rule %s", c.name, c.role, rule.Record)
			}
		}
	}
}

type promtoolTestFile struct {
	Tests []struct {
		AlertRuleTests []struct {
			EvalTime  string           `json:"eval_time"`
			Alertname string           `json:"alertname"`
			ExpAlerts []map[string]any `json:"exp_alerts"`
		} `json:"alert_rule_test"`
		PromQLExprTests []struct {
			Expr string `json:"expr"`
		} `json:"promql_expr_test"`
	} `json:"tests"`
}

func parseDuration(t *testing.T, s string) time.Duration {
	t.Helper()
	d, err := model.ParseDuration(s)
	if err != nil {
		t.Fatalf("eval_time %q: %v", s, err)
	}
	return time.Duration(d)
}

// renderRuleFile writes the groups of the PrometheusRule Deploy writes as a Prometheus rule file.
func renderRuleFile(t *testing.T, dir, name, role string, class Class, replicas int32, backup bool) string {
	t.Helper()
	rule, err := New(nil, "ns", Values{Role: role, Class: class}).(*etcd).prometheusRule(replicas, backup)
	if err != nil {
		t.Fatal(err)
	}
	data, err := yaml.Marshal(map[string]any{"groups": rule.Spec.Groups})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name+".rules.yaml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func promtool(t *testing.T, bin string, args ...string) {
	t.Helper()
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %v: %v\n%s", args, err, out)
	}
}
