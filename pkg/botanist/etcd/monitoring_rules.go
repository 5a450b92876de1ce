package etcd

import (
	"bytes"
	_ "embed"
	"fmt"
	"strings"
	"text/template"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"sigs.k8s.io/yaml"

	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
)

// prometheusRuleTemplate holds the rules as a readable YAML file, so that a reviewer compares them with
// Gardener's line by line and promtool tests run on exactly what Deploy writes.
//
//go:embed assets/prometheusrule.yaml.tmpl
var prometheusRuleTemplate string

var prometheusRuleTmpl = template.Must(template.New("prometheusrule").Option("missingkey=error").Parse(prometheusRuleTemplate))

// ruleInputs are what the rules of one etcd depend on; Gardener's differ by role, class, member count and
// whether the etcd is backed up.
type ruleInputs struct {
	Role             string
	RoleTitle        string
	JobEtcd          string
	JobBackupRestore string
	ContainerEtcd    string
	// Quorum is the number of members that must be up: a majority of the desired members.
	Quorum int32
	// DownFor, DownSeverity and NoLeaderFor page sooner and louder for the important (main) etcd.
	DownFor      string
	DownSeverity string
	NoLeaderFor  string
	// Backup adds the backup and restoration alerts.
	Backup bool
}

func newRuleInputs(role string, class Class, replicas int32, backup bool) ruleInputs {
	in := ruleInputs{
		Role:             role,
		RoleTitle:        title(role),
		JobEtcd:          jobEtcd(role),
		JobBackupRestore: jobBackupRestore(role),
		ContainerEtcd:    etcdpod.ContainerEtcd,
		Quorum:           replicas/2 + 1,
		DownFor:          "15m",
		DownSeverity:     "critical",
		NoLeaderFor:      "15m",
		Backup:           backup,
	}
	if class == ClassImportant {
		in.DownFor, in.DownSeverity, in.NoLeaderFor = "5m", "blocker", "10m"
	}
	return in
}

// prometheusRuleSpec renders the rules of one etcd.
func prometheusRuleSpec(in ruleInputs) (monitoringv1.PrometheusRuleSpec, error) {
	var spec monitoringv1.PrometheusRuleSpec
	var buf bytes.Buffer
	if err := prometheusRuleTmpl.Execute(&buf, in); err != nil {
		return spec, fmt.Errorf("rendering the etcd %s rules: %w", in.Role, err)
	}
	if err := yaml.UnmarshalStrict(buf.Bytes(), &spec); err != nil {
		return spec, fmt.Errorf("parsing the etcd %s rules: %w", in.Role, err)
	}
	return spec, nil
}

// title is main → Main, as Gardener spells the role in alert names.
func title(role string) string {
	if role == "" {
		return ""
	}
	return strings.ToUpper(role[:1]) + role[1:]
}
