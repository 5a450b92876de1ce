package snapshotter

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
)

// latestDeltas exports how much of the store's latest snap stream is deltas: a restore applies the latest
// full snapshot and then every delta after it, so their number and their revisions tell how long a
// restore would replay. The names are the upstream etcd-backup-restore's
// (etcdbr_snapstore_latest_deltas_total, etcdbr_snapstore_latest_deltas_revisions_total), without labels.
type latestDeltas struct {
	count     prometheus.Gauge
	revisions prometheus.Gauge
}

func newLatestDeltas() latestDeltas {
	return latestDeltas{
		count: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "etcdbr", Subsystem: "snapstore", Name: "latest_deltas_total",
			Help: "Number of delta snapshots taken since the latest full snapshot.",
		}),
		revisions: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "etcdbr", Subsystem: "snapstore", Name: "latest_deltas_revisions_total",
			Help: "Number of revisions in the delta snapshots taken since the latest full snapshot.",
		}),
	}
}

// stored follows a snapshot written to the store: a full snapshot starts a new stream without deltas, a
// delta adds itself and its revisions.
func (l latestDeltas) stored(snap *snapshot.Snapshot) {
	if snap.Kind == snapshot.KindFull {
		l.count.Set(0)
		l.revisions.Set(0)
		return
	}
	l.count.Inc()
	l.revisions.Add(float64(snap.LastRevision - snap.StartRevision + 1))
}

// resumed sets both from the deltas after the latest full snapshot in the store, when a term continues
// the stream another term (or process) wrote.
func (l latestDeltas) resumed(deltas []*snapshot.Snapshot) {
	l.count.Set(float64(len(deltas)))
	var revisions int64
	for _, d := range deltas {
		revisions += d.LastRevision - d.StartRevision + 1
	}
	l.revisions.Set(float64(revisions))
}
