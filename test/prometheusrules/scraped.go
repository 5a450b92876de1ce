package prometheusrules

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"text/template"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"sigs.k8s.io/yaml"
)

// Recorder keeps what real scrapes returned, so that the alerting rules can be evaluated on it with
// `promtool test rules`: the scrapes become the test's input series, one sample per interval, as
// Prometheus would have stored them (a series missing from a scrape is marked stale, as Prometheus marks
// it). The e2e suite records druid's /metrics during a backup store outage this way.
type Recorder struct {
	// Interval is the time between scrapes; samples are placed on this grid from the first scrape.
	Interval time.Duration
	// Keep selects the series to record (name and labels); nil keeps every gauge and counter.
	Keep func(name string, labels map[string]string) bool
	// ExtraLabels are added to every series, like the target labels of a ServiceMonitor (pod, job).
	ExtraLabels map[string]string

	mu      sync.Mutex
	first   time.Time
	samples map[string]map[int]float64 // series (promtool notation) → step → value
	steps   int                        // steps recorded so far (index of the last + 1)
}

// Scrape parses one response body in the text exposition format, taken at at.
func (r *Recorder) Scrape(at time.Time, body io.Reader) error {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(body)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.samples == nil {
		r.samples, r.first = map[string]map[int]float64{}, at
	}
	step := r.stepLocked(at)
	for name, family := range families {
		for _, m := range family.GetMetric() {
			value, ok := sampleValue(m)
			if !ok {
				continue
			}
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if r.Keep != nil && !r.Keep(name, labels) {
				continue
			}
			for k, v := range r.ExtraLabels {
				labels[k] = v
			}
			series := seriesNotation(name, labels)
			if r.samples[series] == nil {
				r.samples[series] = map[int]float64{}
			}
			r.samples[series][step] = value
		}
	}
	r.steps = max(r.steps, step+1)
	return nil
}

// Step is the grid step of a moment, for the evaluation times of the checks.
func (r *Recorder) Step(at time.Time) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stepLocked(at)
}

func (r *Recorder) stepLocked(at time.Time) int {
	if r.first.IsZero() || at.Before(r.first) {
		return 0
	}
	return int((at.Sub(r.first) + r.Interval/2) / r.Interval)
}

// Steps is the number of grid steps recorded.
func (r *Recorder) Steps() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.steps
}

func sampleValue(m *dto.Metric) (float64, bool) {
	switch {
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue(), true
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue(), true
	case m.GetUntyped() != nil:
		return m.GetUntyped().GetValue(), true
	default:
		return 0, false // histograms and summaries: no rule reads them yet
	}
}

// seriesNotation is name{k="v", …} with the labels sorted, as promtool's input_series reads it.
func seriesNotation(name string, labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%q", k, labels[k]))
	}
	return name + "{" + strings.Join(parts, ", ") + "}"
}

// AlertCheck is an expectation at one grid step: which instances of an alert fire (none: the alert must
// not fire). Each firing alert is named by its labels, those of the rule included (severity).
type AlertCheck struct {
	Step   int
	Alert  string
	Firing []map[string]string
}

// UnitTest writes a `promtool test rules` file that evaluates rulesFile on the recorded series every
// interval and expects checks. The expected annotations are the rule's own, rendered for each alert's
// labels, since promtool compares them too.
func (r *Recorder) UnitTest(rulesFile string, checks []AlertCheck) ([]byte, error) {
	rules, err := loadAlertingRules(rulesFile)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	series := make([]string, 0, len(r.samples))
	for s := range r.samples {
		series = append(series, s)
	}
	sort.Strings(series)
	var input []map[string]string
	for _, s := range series {
		input = append(input, map[string]string{"series": s, "values": valuesNotation(r.samples[s], r.steps)})
	}
	interval := model.Duration(r.Interval).String()
	r.mu.Unlock()

	var ruleTests []map[string]any
	for _, c := range checks {
		rule, ok := rules[c.Alert]
		if !ok {
			return nil, fmt.Errorf("%s has no alert %s", rulesFile, c.Alert)
		}
		expected := []map[string]any{}
		for _, labels := range c.Firing {
			annotations, err := rule.render(labels)
			if err != nil {
				return nil, fmt.Errorf("alert %s: %w", c.Alert, err)
			}
			expected = append(expected, map[string]any{"exp_labels": labels, "exp_annotations": annotations})
		}
		ruleTests = append(ruleTests, map[string]any{
			"eval_time": model.Duration(time.Duration(c.Step) * r.Interval).String(), "alertname": c.Alert, "exp_alerts": expected,
		})
	}
	return yaml.Marshal(map[string]any{
		"rule_files":          []string{rulesFile},
		"evaluation_interval": interval,
		"tests": []map[string]any{{
			"name": "recorded scrapes", "interval": interval, "input_series": input, "alert_rule_test": ruleTests,
		}},
	})
}

// valuesNotation is one value per step: the sample, `stale` right after the series' last sample when it
// disappeared, `_` where it never was.
func valuesNotation(samples map[int]float64, steps int) string {
	values := make([]string, steps)
	present := false
	for i := range steps {
		v, ok := samples[i]
		switch {
		case ok:
			values[i] = model.SampleValue(v).String()
		case present:
			values[i] = "stale"
		default:
			values[i] = "_"
		}
		present = ok
	}
	return strings.Join(values, " ")
}

// alertingRule is what UnitTest needs of a rule: its annotations, as templates.
type alertingRule struct {
	annotations map[string]string
}

// render expands the annotations as Prometheus does, with $labels bound to the alert's labels.
func (a alertingRule) render(labels map[string]string) (map[string]string, error) {
	out := map[string]string{}
	for k, text := range a.annotations {
		t, err := template.New(k).Option("missingkey=zero").Parse("{{ $labels := .Labels }}" + text)
		if err != nil {
			return nil, fmt.Errorf("annotation %s: %w", k, err)
		}
		var b strings.Builder
		if err := t.Execute(&b, map[string]any{"Labels": labels}); err != nil {
			return nil, fmt.Errorf("annotation %s: %w", k, err)
		}
		out[k] = b.String()
	}
	return out, nil
}

func loadAlertingRules(file string) (map[string]alertingRule, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Groups []struct {
			Rules []struct {
				Alert       string            `json:"alert"`
				Annotations map[string]string `json:"annotations"`
			} `json:"rules"`
		} `json:"groups"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	rules := map[string]alertingRule{}
	for _, g := range doc.Groups {
		for _, r := range g.Rules {
			if r.Alert != "" {
				rules[r.Alert] = alertingRule{annotations: r.Annotations}
			}
		}
	}
	return rules, nil
}
