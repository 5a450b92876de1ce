package compaction

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Label names of the compaction metrics.
const (
	labelNamespace = "etcd_namespace"
	labelName      = "etcd_name"
)

var etcdLabels = []string{labelNamespace, labelName}

// The compaction metrics, served on druid's metrics endpoint through controller-runtime's registry. They
// let an operator alert on clusters whose restores grow long (delta events) or whose compactions keep
// failing.
var (
	jobsCreated = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "etcddruid", Subsystem: "compaction", Name: "jobs_created_total",
		Help: "Compaction Jobs created per Etcd.",
	}, etcdLabels)
	jobsSucceeded = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "etcddruid", Subsystem: "compaction", Name: "jobs_succeeded_total",
		Help: "Compaction Jobs that completed successfully per Etcd.",
	}, etcdLabels)
	jobsFailed = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "etcddruid", Subsystem: "compaction", Name: "jobs_failed_total",
		Help: "Compaction Jobs that failed per Etcd.",
	}, etcdLabels)
	fullSnapshotsRequested = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "etcddruid", Subsystem: "compaction", Name: "full_snapshots_requested_total",
		Help: "Full snapshots requested instead of a compaction Job per Etcd, by outcome (succeeded true or false).",
	}, append(append([]string{}, etcdLabels...), "succeeded"))
	deltaEventsGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "etcddruid", Subsystem: "compaction", Name: "delta_events",
		Help: "Events in delta snapshots since the last full snapshot (delta minus full snapshot lease revision) per Etcd.",
	}, etcdLabels)
)

var registerOnce sync.Once

// registerMetrics adds the metrics to controller-runtime's registry once per process.
func registerMetrics() {
	registerOnce.Do(func() {
		metrics.Registry.MustRegister(jobsCreated, jobsSucceeded, jobsFailed, fullSnapshotsRequested, deltaEventsGauge)
	})
}

// forgetMetrics drops every series of a gone Etcd, so that churned clusters do not accumulate.
func forgetMetrics(namespace, name string) {
	labels := prometheus.Labels{labelNamespace: namespace, labelName: name}
	for _, vec := range []*prometheus.MetricVec{jobsCreated.MetricVec, jobsSucceeded.MetricVec, jobsFailed.MetricVec, deltaEventsGauge.MetricVec} {
		vec.Delete(labels)
	}
	fullSnapshotsRequested.DeletePartialMatch(labels)
}
