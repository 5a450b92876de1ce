package sidecar

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// restorationMetric registers etcdbr_restoration_duration_seconds{succeeded} with reg, under the deployed
// etcd-backup-restore's name and label (Gardener alerts on its _count with succeeded="false"), and returns
// the function the initializer records each restore from the store with. Both label values exist from the
// start, so that rate() over the _count sees the first failure.
func restorationMetric(reg prometheus.Registerer) func(took time.Duration, succeeded bool) {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "etcdbr", Name: "restoration_duration_seconds",
		Help: "Duration of restores of the data directory from the backups, by outcome.",
		// A restore replays a full snapshot and its deltas: seconds to tens of minutes.
		Buckets: prometheus.ExponentialBuckets(1, 2, 12),
	}, []string{"succeeded"})
	h.WithLabelValues("true")
	h.WithLabelValues("false")
	reg.MustRegister(h)
	return func(took time.Duration, succeeded bool) {
		h.WithLabelValues(strconv.FormatBool(succeeded)).Observe(took.Seconds())
	}
}
