package defrag

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics of defragmentation and NOSPACE recovery. The duration keeps the upstream etcd-backup-restore's
// name and labels (etcdbr_defragmentation_duration_seconds{succeeded,endpoint}), so that Gardener's
// dashboards see how long members stall and whether defragmentation fails; the others are ours.
type Metrics struct {
	duration *prometheus.HistogramVec
	// runs counts completed runs by what started them.
	runs *prometheus.CounterVec
	// steps counts the NOSPACE recovery's steps by outcome; "snapshot" is the full snapshot after the
	// disarm, whose failure does not fail the recovery.
	steps *prometheus.CounterVec
	// overQuota is 1 while a NOSPACE alarm stays because the data in use does not fit under the quota, as
	// the backup leader of the current term found it; a sidecar whose term ended reports 0.
	overQuota prometheus.Gauge
}

// NewMetrics creates the metrics and registers them with reg (nil: not registered). As upstream does, the
// duration series with endpoint="" exist from the start for both outcomes; so do the series of every
// trigger and recovery step, so that alerts see a zero before the first occurrence.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "etcdbr", Name: "defragmentation_duration_seconds",
			Help: "Duration of the defragmentation of each etcd member, by outcome and the member's client endpoint.",
			// A member's database is rewritten: from milliseconds up to the timeout (15 minutes by default).
			Buckets: prometheus.ExponentialBuckets(0.01, 4, 10),
		}, []string{"succeeded", "endpoint"}),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "etcdbr", Name: "defragmentation_runs_total",
			Help: "Completed defragmentations of the cluster, by trigger (schedule, fragmentation, quota, nospace).",
		}, []string{"trigger"}),
		steps: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "etcdbr", Name: "nospace_recovery_steps_total",
			Help: "Steps of the recovery from an etcd NOSPACE alarm (compact, refresh, defragment, disarm, snapshot), by outcome.",
		}, []string{"step", "succeeded"}),
		overQuota: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "etcdbr", Name: "nospace_over_quota",
			Help: "1 while an etcd NOSPACE alarm stays active because the data in use does not fit under the quota even after compaction and defragmentation.",
		}),
	}
	for _, s := range []string{"true", "false"} {
		m.duration.WithLabelValues(s, "")
		for _, step := range []string{stepCompact, stepRefresh, stepDefragment, stepDisarm, stepSnapshot} {
			m.steps.WithLabelValues(step, s)
		}
	}
	for _, t := range []Trigger{TriggerSchedule, TriggerFragmentation, TriggerQuota, TriggerNoSpace} {
		m.runs.WithLabelValues(string(t))
	}
	if reg != nil {
		reg.MustRegister(m.duration, m.runs, m.steps, m.overQuota)
	}
	return m
}

// defragmented records one member's defragmentation; a nil Metrics records nothing.
func (m *Metrics) defragmented(endpoint string, took time.Duration, err error) {
	if m == nil {
		return
	}
	m.duration.WithLabelValues(strconv.FormatBool(err == nil), endpoint).Observe(took.Seconds())
}

// ran counts a completed run.
func (m *Metrics) ran(t Trigger) {
	if m == nil {
		return
	}
	m.runs.WithLabelValues(string(t)).Inc()
}

// step counts a NOSPACE recovery step.
func (m *Metrics) step(step string, err error) {
	if m == nil {
		return
	}
	m.steps.WithLabelValues(step, strconv.FormatBool(err == nil)).Inc()
}

func (m *Metrics) setOverQuota(over bool) {
	if m == nil {
		return
	}
	v := 0.0
	if over {
		v = 1
	}
	m.overQuota.Set(v)
}
