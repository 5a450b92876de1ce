package initializer

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// RestoreKind is the restore label of etcdbr_restoration_duration_seconds, with the upstream
// etcd-backup-restore's values.
type RestoreKind string

const (
	// RestoreSingleNode is a restore from the store as a one-member cluster: a one-member cluster's, or
	// the first member's of a larger cluster that lost quorum and its data (case 7; the others then join
	// it). The upstream sidecar labels both so.
	RestoreSingleNode RestoreKind = "single_node"
	// RestoreSingleMember is a member of a multi-member cluster whose data cannot be used rejoining the
	// running cluster (cases 4 and 5, and 8 once the cluster is quorate): its old identity removed, its data
	// moved aside, added back as a learner that gets the data from the leader.
	RestoreSingleMember RestoreKind = "single_member"
)

// Metrics record what the initialization does to the data directory and the membership, under the
// upstream etcd-backup-restore's names and labels, which Gardener's dashboards and alerts query. A Metrics
// lives as long as the sidecar process (an Initializer is created per initialization); every label
// combination exists from the start, as upstream, so that rate() over a _count sees the first
// observation.
type Metrics struct {
	validation     *prometheus.HistogramVec
	restoration    *prometheus.HistogramVec
	addLearner     *prometheus.HistogramVec
	addedAsLearner *prometheus.CounterVec
}

// NewMetrics creates the metrics and registers them with reg (nil: not registered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		validation: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "etcdbr", Name: "validation_duration_seconds",
			Help: "Duration of the validation of the data directory, by outcome (false: the data was refused).",
			// Reading the WAL and opening the database: milliseconds to minutes.
			Buckets: prometheus.ExponentialBuckets(0.01, 4, 10),
		}, []string{"succeeded"}),
		restoration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "etcdbr", Name: "restoration_duration_seconds",
			Help: "Duration of restorations of the data directory, by kind (single_node: from the backups; single_member: rejoining the cluster as a learner) and outcome.",
			// A restore replays a full snapshot and its deltas: seconds to tens of minutes.
			Buckets: prometheus.ExponentialBuckets(1, 2, 12),
		}, []string{"restore", "succeeded"}),
		addLearner: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "etcdbr", Name: "add_learner_duration_seconds",
			Help:    "Duration of adding this member to the cluster as a learner, by outcome.",
			Buckets: prometheus.ExponentialBuckets(0.01, 4, 10),
		}, []string{"succeeded"}),
		addedAsLearner: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "etcdbr", Name: "is_learner_count_total",
			Help: "Times this member was added to the cluster as a learner (succeeded=false: the add failed).",
		}, []string{"succeeded"}),
	}
	for _, succeeded := range []string{"true", "false"} {
		m.validation.WithLabelValues(succeeded)
		m.restoration.WithLabelValues(string(RestoreSingleNode), succeeded)
		m.restoration.WithLabelValues(string(RestoreSingleMember), succeeded)
		m.addLearner.WithLabelValues(succeeded)
		m.addedAsLearner.WithLabelValues(succeeded)
	}
	if reg != nil {
		reg.MustRegister(m.validation, m.restoration, m.addLearner, m.addedAsLearner)
	}
	return m
}

// The methods below are safe on a nil Metrics (Options.Metrics unset): they record nothing.

func (m *Metrics) validated(since time.Time, succeeded bool) {
	if m != nil {
		m.validation.WithLabelValues(strconv.FormatBool(succeeded)).Observe(time.Since(since).Seconds())
	}
}

func (m *Metrics) restored(kind RestoreKind, since time.Time, err error) {
	if m != nil {
		m.restoration.WithLabelValues(string(kind), strconv.FormatBool(err == nil)).Observe(time.Since(since).Seconds())
	}
}

func (m *Metrics) addedLearner(since time.Time, err error) {
	if m != nil {
		succeeded := strconv.FormatBool(err == nil)
		m.addLearner.WithLabelValues(succeeded).Observe(time.Since(since).Seconds())
		m.addedAsLearner.WithLabelValues(succeeded).Inc()
	}
}
