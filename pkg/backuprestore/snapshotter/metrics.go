package snapshotter

import (
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
)

// Metrics make backup health visible to monitoring: the BackupReady condition of druid is derived from
// the leases, but an operator needs to see why (failures, durations, sizes) and when it went wrong. The
// names and labels are those of the upstream etcd-backup-restore that Gardener's monitoring queries
// (etcdbr_snapshot_latest_timestamp{kind}, etcdbr_snapshot_gc_total{kind,succeeded},
// etcdbr_snapshotter_failure{error}, etcdbr_snapshot_required{kind}, etcdbr_snapstore_latest_deltas_total, …); bytes_total is ours.
type Metrics struct {
	latestRevision *prometheus.GaugeVec
	latestTime     *prometheus.GaugeVec
	required       *prometheus.GaugeVec
	failures       *prometheus.CounterVec
	gc             *prometheus.CounterVec
	gcLocked       *prometheus.GaugeVec
	duration       *prometheus.HistogramVec
	bytes          *prometheus.CounterVec
	watchPaused    prometheus.Gauge
	latestDeltas

	mu sync.Mutex
	// failingSince is when the first snapshot upload (full or delta) failed since the last one that
	// succeeded; zero while uploads succeed.
	failingSince time.Time
}

// NewMetrics creates the metrics and registers them with reg (nil: not registered, e.g. in tests that
// run several snapshotters).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		latestRevision: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "etcdbr", Subsystem: "snapshot", Name: "latest_revision",
			Help: "Last revision of the latest successful snapshot, by kind (Full, Incr).",
		}, []string{"kind"}),
		latestTime: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "etcdbr", Subsystem: "snapshot", Name: "latest_timestamp",
			Help: "Unix time of the latest successful snapshot, by kind.",
		}, []string{"kind"}),
		required: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "etcdbr", Subsystem: "snapshot", Name: "required",
			Help: "1 while etcd holds revisions that no snapshot of the kind holds yet (Full: changed since the latest full snapshot; Incr: watched events waiting for the next delta), else 0.",
		}, []string{"kind"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "etcdbr", Subsystem: "snapshotter", Name: "failure",
			Help: "Failed snapshotter operations; error names the operation (Full, Incr, GC).",
		}, []string{"error"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "etcdbr", Subsystem: "snapshot", Name: "duration_seconds",
			Help: "Duration of snapshot attempts, by kind and outcome.",
			// The upstream sidecar's (the defaults, up to 10 s), so that panels over the buckets read
			// the same under either sidecar; longer full snapshots count only in +Inf, _sum and _count.
			Buckets: prometheus.DefBuckets,
		}, []string{"kind", "succeeded"}),
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "etcdbr", Subsystem: "snapshot", Name: "bytes_total",
			Help: "Uncompressed bytes of successful snapshots, by kind.",
		}, []string{"kind"}),
		gc: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "etcdbr", Subsystem: "snapshot", Name: "gc_total",
			Help: "Snapshots garbage collection deleted (succeeded=true) or failed to delete (false), by kind.",
		}, []string{"kind", "succeeded"}),
		gcLocked: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "etcdbr", Subsystem: "snapshot", Name: "gc_locked",
			Help: "Snapshots the last garbage collection would have deleted but left because the store's retention still locks them (immutable backups), by kind.",
		}, []string{"kind"}),
		watchPaused: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "etcdbr", Subsystem: "snapshot", Name: "delta_watch_paused",
			Help: "1 while the delta watch pauses because the events buffered and being stored reached the delta snapshot memory limit (the store is slow or failing), else 0.",
		}),
		latestDeltas: newLatestDeltas(),
	}
	m.pending(false, false) // exported from the start, as the upstream sidecar does
	m.zeroSeries()
	if reg != nil {
		reg.MustRegister(m.latestRevision, m.latestTime, m.required, m.failures, m.duration, m.bytes, m.gc, m.gcLocked, m.watchPaused, m.latestDeltas.count, m.latestDeltas.revisions)
	}
	return m
}

// zeroSeries creates the garbage collection and failure series at 0, as the upstream sidecar does, so that
// rate() and increase() see the first collection or failure instead of a series that starts at 1. The
// failure series are the upstream error="" and the operations ours names in that label.
func (m *Metrics) zeroSeries() {
	for _, kind := range []snapshot.Kind{snapshot.KindFull, snapshot.KindIncr} {
		m.gc.WithLabelValues(string(kind), "true")
		m.gc.WithLabelValues(string(kind), "false")
		m.gcLocked.WithLabelValues(string(kind))
	}
	for _, op := range []string{"", string(snapshot.KindFull), string(snapshot.KindIncr), "GC"} {
		m.failures.WithLabelValues(op)
	}
}

// succeeded records a snapshot written to the store.
func (m *Metrics) succeeded(snap *snapshot.Snapshot, size int64, took time.Duration) {
	kind := string(snap.Kind)
	m.mu.Lock()
	m.failingSince = time.Time{}
	m.mu.Unlock()
	m.latest(snap.Kind, snap)
	m.duration.WithLabelValues(kind, "true").Observe(took.Seconds())
	m.bytes.WithLabelValues(kind).Add(float64(size))
	m.latestDeltas.stored(snap)
}

// latest records snap as the newest snapshot of kind.
func (m *Metrics) latest(kind snapshot.Kind, snap *snapshot.Snapshot) {
	m.latestRevision.WithLabelValues(string(kind)).Set(float64(snap.LastRevision))
	m.latestTime.WithLabelValues(string(kind)).Set(float64(snap.CreatedOn.Unix()))
}

// resumed records the stream a new term continues: its full snapshot and its newest delta (the full
// snapshot's revision and time while it has none, as the upstream sidecar reports it) are the latest
// snapshots from the start. Without them the age of the latest backup has no series until an upload
// succeeds, and Gardener's backup alerts, which compute that age, could not fire for a leader whose
// uploads fail right after a restart.
func (m *Metrics) resumed(full *snapshot.Snapshot, deltas []*snapshot.Snapshot) {
	m.latest(snapshot.KindFull, full)
	latestIncr := full
	if n := len(deltas); n > 0 {
		latestIncr = deltas[n-1]
	}
	m.latest(snapshot.KindIncr, latestIncr)
	m.latestDeltas.resumed(deltas)
}

// pending records which kinds of snapshot are behind etcd. Gardener's backup alerts add it to the age of
// the latest snapshot (`(time() - etcdbr_snapshot_latest_timestamp > bool period) + etcdbr_snapshot_required
// > 1`), so that an old snapshot of a cluster that has not changed since does not alert.
func (m *Metrics) pending(full, incr bool) {
	m.required.WithLabelValues(string(snapshot.KindFull)).Set(gaugeBool(full))
	m.required.WithLabelValues(string(snapshot.KindIncr)).Set(gaugeBool(incr))
}

// paused records whether the delta watch pauses for the memory limit.
func (m *Metrics) paused(p bool) { m.watchPaused.Set(gaugeBool(p)) }

func gaugeBool(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// collected records the garbage collection of one snapshot.
func (m *Metrics) collected(snap *snapshot.Snapshot, deleted bool) {
	m.gc.WithLabelValues(string(snap.Kind), strconv.FormatBool(deleted)).Inc()
}

// lockedInGC records how many snapshots of each kind the last garbage collection left locked.
func (m *Metrics) lockedInGC(locked map[snapshot.Kind]int) {
	for _, kind := range []snapshot.Kind{snapshot.KindFull, snapshot.KindIncr} {
		m.gcLocked.WithLabelValues(string(kind)).Set(float64(locked[kind]))
	}
}

// failed records a failed attempt of kind (a snapshot.Kind or "GC").
func (m *Metrics) failed(kind string, took time.Duration) {
	if kind != "GC" {
		m.mu.Lock()
		if m.failingSince.IsZero() {
			m.failingSince = time.Now()
		}
		m.mu.Unlock()
	}
	m.failures.WithLabelValues(kind).Inc()
	m.duration.WithLabelValues(kind, "false").Observe(took.Seconds())
}

// UploadsFailingSince is when snapshot uploads started failing: the time of the first failed full or
// delta snapshot after the last successful one; zero when the last upload succeeded or none was tried.
// A failed garbage collection is not an upload failure.
func (m *Metrics) UploadsFailingSince() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.failingSince
}
