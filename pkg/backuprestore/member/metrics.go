package member

import (
	"context"
	"strconv"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Metrics show this member's place in the cluster as the sidecar sees it, under the upstream
// etcd-backup-restore's names: etcdbr_cluster_size and etcdbr_is_learner (gauges without labels) and
// etcdbr_member_promote_duration_seconds{succeeded}, and etcdbr_member_remove_duration_seconds{succeeded} of
// the removals the backup leader makes after a scale-in (package scaledown). A member stuck as a learner, or a cluster smaller
// than its replicas, shows there before it shows in quorum loss.
type Metrics struct {
	clusterSize prometheus.Gauge
	isLearner   prometheus.Gauge
	promote     *prometheus.HistogramVec
	remove      *prometheus.HistogramVec
}

// NewMetrics creates the metrics and registers them with reg (nil: not registered). Both outcomes of the
// promotion exist from the start, as upstream.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		clusterSize: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "etcdbr", Name: "cluster_size",
			Help: "Current etcd cluster size: the members, learners included, in the member list.",
		}),
		isLearner: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "etcdbr", Name: "is_learner",
			Help: "Whether this member is a learner: 1 if it is, 0 otherwise.",
		}),
		promote: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "etcdbr", Name: "member_promote_duration_seconds",
			Help: "Duration of promoting this member from learner to voting member (until it had caught up), by outcome.",
			// A learner catches up from the leader's raft snapshot: seconds to minutes.
			Buckets: prometheus.ExponentialBuckets(0.1, 2, 12),
		}, []string{"succeeded"}),
		remove: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "etcdbr", Name: "member_remove_duration_seconds",
			Help:    "Duration of removing a member from the cluster (a member beyond the cluster size after a scale-in), by outcome.",
			Buckets: prometheus.ExponentialBuckets(0.01, 4, 8),
		}, []string{"succeeded"}),
	}
	for _, outcome := range []string{"true", "false"} {
		m.promote.WithLabelValues(outcome)
		m.remove.WithLabelValues(outcome)
	}
	if reg != nil {
		reg.MustRegister(m.clusterSize, m.isLearner, m.promote, m.remove)
	}
	return m
}

// Observe records the local member's learner flag and the size of the member list it was found in.
func (m *Metrics) Observe(l *Local) {
	if m == nil {
		return
	}
	m.clusterSize.Set(float64(l.ClusterSize))
	if l.Member.GetIsLearner() {
		m.isLearner.Set(1)
	} else {
		m.isLearner.Set(0)
	}
}

// ObserveRemoval records one member removal that took took; a refused one (quorum, etcd's own guard) did
// not succeed. A nil Metrics records nothing.
func (m *Metrics) ObserveRemoval(took time.Duration, err error) {
	if m != nil {
		m.remove.WithLabelValues(strconv.FormatBool(err == nil)).Observe(took.Seconds())
	}
}

// PromoteLearner is the package's PromoteLearner, timed; a nil Metrics only promotes. After a promotion
// this member is no learner any more.
func (m *Metrics) PromoteLearner(ctx context.Context, cli *clientv3.Client, id uint64, interval time.Duration, log logr.Logger) error {
	start := time.Now()
	err := PromoteLearner(ctx, cli, id, interval, log)
	if m != nil {
		m.promote.WithLabelValues(strconv.FormatBool(err == nil)).Observe(time.Since(start).Seconds())
		if err == nil {
			m.isLearner.Set(0)
		}
	}
	return err
}
