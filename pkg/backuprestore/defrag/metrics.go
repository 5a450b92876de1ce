package defrag

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics time the defragmentation of each member, under the upstream etcd-backup-restore's name and
// labels (etcdbr_defragmentation_duration_seconds{succeeded,endpoint}), so that Gardener's dashboards see
// how long members stall and whether defragmentation fails.
type Metrics struct {
	duration *prometheus.HistogramVec
}

// NewMetrics creates the metrics and registers them with reg (nil: not registered). As upstream does, the
// series with endpoint="" exist from the start for both outcomes.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "etcdbr", Name: "defragmentation_duration_seconds",
		Help: "Duration of the defragmentation of each etcd member, by outcome and the member's client endpoint.",
		// A member's database is rewritten: from milliseconds up to the timeout (15 minutes by default).
		Buckets: prometheus.ExponentialBuckets(0.01, 4, 10),
	}, []string{"succeeded", "endpoint"})}
	m.duration.WithLabelValues("true", "")
	m.duration.WithLabelValues("false", "")
	if reg != nil {
		reg.MustRegister(m.duration)
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
