package compaction

import (
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// Label names of the compaction metrics.
const (
	labelNamespace = "etcd_namespace"
	labelName      = "etcd_name"
	labelSucceeded = "succeeded"
	// labelFailureReason says why a Job failed (failureReason in failurereason.go), "none" when it succeeded.
	labelFailureReason = "failureReason"
)

var etcdLabels = []string{labelNamespace, labelName}

// The compaction metrics, served on druid's metrics endpoint through controller-runtime's registry, under
// the names of upstream etcd-druid that Gardener's monitoring queries (there with etcd_namespace only;
// etcd_name is added here because a namespace may hold several Etcds). They let an operator alert on
// clusters whose restores grow long (delta events) or whose compactions keep failing.
var (
	jobsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "etcddruid", Subsystem: "compaction", Name: "jobs_total",
		Help: "Compaction Jobs that finished per Etcd, by outcome (succeeded true or false) and failure reason.",
	}, []string{labelSucceeded, labelFailureReason, labelNamespace, labelName})
	jobsCurrent = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "etcddruid", Subsystem: "compaction", Name: "jobs_current",
		Help: "Compaction Jobs running per Etcd (0 or 1).",
	}, etcdLabels)
	jobDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "etcddruid", Subsystem: "compaction", Name: "job_duration_seconds",
		Help: "Time from the start of a compaction Job to its completion or failure, by outcome and failure reason.",
		// 1, 5, 10, 15, 20 and 30 minutes, as upstream.
		Buckets: []float64{60, 300, 600, 900, 1200, 1800},
	}, []string{labelSucceeded, labelFailureReason, labelNamespace, labelName})
	fullSnapshotTriggered = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "etcddruid", Subsystem: "compaction", Name: "full_snapshot_triggered_total",
		Help: "Full snapshots requested from the backup leader instead of a compaction Job (at triggerFullSnapshotThreshold or after a Job ran out of its deadline), by outcome.",
	}, []string{labelSucceeded, labelNamespace, labelName})
	deltaEventsGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "etcddruid", Subsystem: "compaction", Name: "num_delta_events",
		Help: "Events in delta snapshots since the last full snapshot (delta minus full snapshot lease revision) per Etcd: what a compaction Job would compact.",
	}, etcdLabels)
)

var registerOnce sync.Once

// registerMetrics adds the metrics to controller-runtime's registry once per process.
func registerMetrics() {
	registerOnce.Do(func() {
		metrics.Registry.MustRegister(jobsTotal, jobsCurrent, jobDuration, fullSnapshotTriggered, deltaEventsGauge)
	})
}

// forgetMetrics drops every series of a gone Etcd, so that churned clusters do not accumulate.
func forgetMetrics(namespace, name string) {
	labels := prometheus.Labels{labelNamespace: namespace, labelName: name}
	for _, vec := range []*prometheus.MetricVec{jobsTotal.MetricVec, jobsCurrent.MetricVec, jobDuration.MetricVec, fullSnapshotTriggered.MetricVec, deltaEventsGauge.MetricVec} {
		vec.DeletePartialMatch(labels)
	}
}

// jobFinished records a compaction Job that completed (reason failureReasonNone) or failed for reason;
// cond is its final condition.
func jobFinished(etcd *druidv1alpha1.Etcd, job *batchv1.Job, cond *batchv1.JobCondition, reason string) {
	outcome := strconv.FormatBool(reason == failureReasonNone)
	jobsTotal.WithLabelValues(outcome, reason, etcd.Namespace, etcd.Name).Inc()
	jobsCurrent.WithLabelValues(etcd.Namespace, etcd.Name).Set(0)
	if job.Status.StartTime != nil && cond != nil && !cond.LastTransitionTime.IsZero() {
		jobDuration.WithLabelValues(outcome, reason, etcd.Namespace, etcd.Name).Observe(cond.LastTransitionTime.Sub(job.Status.StartTime.Time).Seconds())
	}
}
