package etcd

import (
	"os"
	"path/filepath"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/yaml"
)

// monitoringCase is one etcd of a shoot as Gardener deploys it, with the golden files of its objects.
type monitoringCase struct {
	name     string
	values   Values
	replicas int32
	backup   bool
}

var goldenMonitoringCases = []monitoringCase{
	{name: "main", values: Values{Role: RoleMain}, replicas: 1, backup: true},
	{name: "events", values: Values{Role: RoleEvents}, replicas: 1, backup: false},
}

// TestMonitoringObjectsMatchGardener: the ServiceMonitor and the PrometheusRule of the important main etcd
// (backed up) and the normal events etcd are exactly the golden files, which hold Gardener's selectors,
// endpoints, relabelings, job names, alert names, expressions, durations and labels. A change to any of
// them breaks the shoot Prometheus's dashboards or Alertmanager routes and must show up here.
func TestMonitoringObjectsMatchGardener(t *testing.T) {
	for _, c := range goldenMonitoringCases {
		t.Run(c.name, func(t *testing.T) {
			e := New(nil, "shoot--foo--bar", c.values).(*etcd)
			rule, err := e.prometheusRule(c.replicas, c.backup)
			if err != nil {
				t.Fatal(err)
			}
			compareGolden(t, "shoot-etcd-"+c.name+".servicemonitor.yaml", e.serviceMonitor(), &monitoringv1.ServiceMonitor{})
			compareGolden(t, "shoot-etcd-"+c.name+".prometheusrule.yaml", rule, &monitoringv1.PrometheusRule{})
		})
	}
}

func compareGolden[T any](t *testing.T, file string, got, want *T) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "monitoring", file))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(data, want); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if !apiequality.Semantic.DeepEqual(got, want) {
		out, _ := yaml.Marshal(got)
		t.Errorf("the object differs from testdata/monitoring/%s; it is:\n%s", file, out)
	}
}

// TestPrometheusRuleByClass: the class, not the role, decides how soon and how loudly an outage pages, the
// member count decides the quorum, and only a backed-up etcd gets the backup alerts.
func TestPrometheusRuleByClass(t *testing.T) {
	e := New(nil, "ns", Values{Role: RoleMain, Class: ClassNormal}).(*etcd)
	rule, err := e.prometheusRule(3, false)
	if err != nil {
		t.Fatal(err)
	}
	rules := map[string]monitoringv1.Rule{}
	for _, r := range rule.Spec.Groups[0].Rules {
		rules[r.Alert] = r
	}
	down := rules["KubeEtcdMainDown"]
	if got := down.Expr.String(); got != `sum(up{job="kube-etcd3-main"}) < 2` {
		t.Errorf("KubeEtcdMainDown of 3 members: expr %q, want a quorum of 2", got)
	}
	if *down.For != "15m" || down.Labels["severity"] != "critical" {
		t.Errorf("KubeEtcdMainDown of class normal: for %s severity %s, want 15m critical", *down.For, down.Labels["severity"])
	}
	if noLeader := rules["KubeEtcd3MainNoLeader"]; *noLeader.For != "15m" {
		t.Errorf("KubeEtcd3MainNoLeader of class normal: for %s, want 15m", *noLeader.For)
	}
	for _, name := range []string{"KubeEtcdMainDeltaBackupFailed", "KubeEtcdMainFullBackupFailed", "KubeEtcdMainRestorationFailed", "KubeEtcdMainBackupRestoreDown"} {
		if _, ok := rules[name]; ok {
			t.Errorf("%s written for an etcd without backup", name)
		}
	}
}
