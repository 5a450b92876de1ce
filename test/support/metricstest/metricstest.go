// Package metricstest reads metrics from a Prometheus gatherer the way a scrape sees them, for tests that
// check a metric after the real operation it records.
package metricstest

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Find returns the series name{labels} (labels may name a subset of the series' labels), or nil when it
// is not exported.
func Find(t *testing.T, g prometheus.Gatherer, name string, labels map[string]string) *dto.Metric {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, family := range families {
		if family.GetName() != name {
			continue
		}
		for _, metric := range family.GetMetric() {
			if hasLabels(metric, labels) {
				return metric
			}
		}
	}
	return nil
}

func hasLabels(metric *dto.Metric, labels map[string]string) bool {
	got := map[string]string{}
	for _, label := range metric.GetLabel() {
		got[label.GetName()] = label.GetValue()
	}
	for k, v := range labels {
		if value, ok := got[k]; !ok || value != v {
			return false
		}
	}
	return true
}

// Value is the value of the gauge or counter name{labels}; the test fails when it is not exported.
func Value(t *testing.T, g prometheus.Gatherer, name string, labels map[string]string) float64 {
	t.Helper()
	metric := Find(t, g, name, labels)
	switch {
	case metric == nil:
		t.Fatalf("%s%v not exported", name, labels)
	case metric.GetCounter() != nil:
		return metric.GetCounter().GetValue()
	}
	return metric.GetGauge().GetValue()
}

// Count is the number of observations of the histogram name{labels}; the test fails when it is not
// exported.
func Count(t *testing.T, g prometheus.Gatherer, name string, labels map[string]string) uint64 {
	t.Helper()
	metric := Find(t, g, name, labels)
	if metric == nil || metric.GetHistogram() == nil {
		t.Fatalf("histogram %s%v not exported", name, labels)
	}
	return metric.GetHistogram().GetSampleCount()
}
