package etcd

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/health"
)

// The per-Etcd metrics (labels namespace and name of the Etcd), read from druid's cache at scrape time: an
// Etcd that is deleted leaves no series behind, and every druid replica (the cache runs on followers too)
// serves the same values, so the alerts aggregate by (namespace, name). The one exception is the
// quorum-loss recovery counter: only the leading replica reconciles and counts, and a new leader starts
// at 0, so sum it over replicas and expect resets at a failover. The alerts on them are in
// charts/etcd-druid/files/prometheus-rules.yaml.
var (
	etcdLabels = []string{"namespace", "name"}

	descCondition = prometheus.NewDesc("etcddruid_etcd_condition",
		"Condition of an Etcd: 1 for its current status and reason (condition Ready, AllMembersReady, BackupReady, DataVolumesReady, QuorumLossRecovery, …).",
		append(etcdLabels, "condition", "status", "reason"), nil)
	descMembersReady = prometheus.NewDesc("etcddruid_etcd_members_ready",
		"Members of an Etcd whose status (from their member lease) is Ready.", etcdLabels, nil)
	descMembersTotal = prometheus.NewDesc("etcddruid_etcd_members_total",
		"Members of an Etcd in its status.", etcdLabels, nil)
	descClusterSize = prometheus.NewDesc("etcddruid_etcd_cluster_size",
		"Members the cluster was last bootstrapped or scaled to (the StatefulSet's annotation druid.gardener.cloud/cluster-size).", etcdLabels, nil)
	descReplicas = prometheus.NewDesc("etcddruid_etcd_replicas",
		"Members an Etcd asks for (spec.replicas).", etcdLabels, nil)
	descSnapshotTime = prometheus.NewDesc("etcddruid_etcd_snapshot_latest_timestamp_seconds",
		"Unix time of the latest snapshot the backup leader recorded in the snapshot lease, by kind (full, delta); the age is time() minus this.",
		append(etcdLabels, "kind"), nil)
	descDeltaPeriod = prometheus.NewDesc("etcddruid_etcd_delta_snapshot_period_seconds",
		"Delta snapshot period of an Etcd with a backup store (spec.backup.deltaSnapshotPeriod or the sidecar's default).", etcdLabels, nil)
	descRecoveries = prometheus.NewDesc("etcddruid_etcd_quorum_loss_recoveries_total",
		"Quorum-loss recoveries this druid process started for an Etcd (the heal decision table's case 10: scaled to 0 to bootstrap again from the backup).", etcdLabels, nil)
)

// collectTimeout bounds one scrape's reads from the cache.
const collectTimeout = 10 * time.Second

// etcdCollector is the prometheus.Collector of the per-Etcd metrics. One per process (controller-runtime's
// registry is global): AddToManager points it at the newest manager's cache.
type etcdCollector struct {
	mu         sync.Mutex
	reader     client.Reader
	recoveries map[types.NamespacedName]float64
}

var (
	collector           = &etcdCollector{recoveries: map[types.NamespacedName]float64{}}
	registerCollectorFn sync.Once
)

// registerCollector serves the per-Etcd metrics from reader (the manager's cache) on controller-runtime's
// metrics registry.
func registerCollector(reader client.Reader) {
	collector.mu.Lock()
	collector.reader = reader
	collector.mu.Unlock()
	registerCollectorFn.Do(func() { ctrlmetrics.Registry.MustRegister(collector) })
}

// recoveryStarted counts a quorum-loss recovery of the Etcd.
func (c *etcdCollector) recoveryStarted(etcd types.NamespacedName) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.recoveries[etcd]++
}

// Describe implements prometheus.Collector.
func (c *etcdCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descCondition, descMembersReady, descMembersTotal, descClusterSize, descReplicas,
		descSnapshotTime, descDeltaPeriod, descRecoveries} {
		ch <- d
	}
}

// Collect implements prometheus.Collector: one set of series per Etcd in the cache.
func (c *etcdCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	reader := c.reader
	c.mu.Unlock()
	if reader == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), collectTimeout)
	defer cancel()
	list := &druidv1alpha1.EtcdList{}
	if err := reader.List(ctx, list); err != nil {
		// The cache has not started yet (a scrape during start-up): no series rather than a failed scrape,
		// which would also take druid's other metrics down.
		return
	}
	seen := make(map[types.NamespacedName]bool, len(list.Items))
	for i := range list.Items {
		etcd := &list.Items[i]
		key := client.ObjectKeyFromObject(etcd)
		seen[key] = true
		c.collectEtcd(ctx, reader, etcd, ch)
	}
	// Counters of Etcds that are gone are dropped with their series.
	c.mu.Lock()
	for key, n := range c.recoveries {
		if !seen[key] {
			delete(c.recoveries, key)
			continue
		}
		ch <- prometheus.MustNewConstMetric(descRecoveries, prometheus.CounterValue, n, key.Namespace, key.Name)
	}
	for key := range seen {
		if _, ok := c.recoveries[key]; !ok {
			ch <- prometheus.MustNewConstMetric(descRecoveries, prometheus.CounterValue, 0, key.Namespace, key.Name)
		}
	}
	c.mu.Unlock()
}

func (c *etcdCollector) collectEtcd(ctx context.Context, reader client.Reader, etcd *druidv1alpha1.Etcd, ch chan<- prometheus.Metric) {
	ns, name := etcd.Namespace, etcd.Name
	gauge := func(d *prometheus.Desc, v float64, extra ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, append([]string{ns, name}, extra...)...)
	}
	st := etcd.Status
	for _, cond := range st.Conditions {
		gauge(descCondition, 1, string(cond.Type), string(cond.Status), cond.Reason)
	}
	ready := 0
	for _, m := range st.Members {
		if m.Status == druidv1alpha1.EtcdMemberStatusReady {
			ready++
		}
	}
	gauge(descMembersReady, float64(ready))
	gauge(descMembersTotal, float64(len(st.Members)))
	sts := &appsv1.StatefulSet{}
	if err := reader.Get(ctx, types.NamespacedName{Namespace: ns, Name: druidv1alpha1.StatefulSetName(etcd)}, sts); err == nil {
		if size, ok := druidv1alpha1.AnnotatedClusterSize(sts.Annotations); ok {
			gauge(descClusterSize, float64(size))
		}
	}
	gauge(descReplicas, float64(etcd.Spec.Replicas))

	if etcd.Spec.Backup.Store == nil {
		return
	}
	period := health.DefaultDeltaSnapshotPeriod
	if p := etcd.Spec.Backup.DeltaSnapshotPeriod; p != nil && p.Duration > 0 {
		period = p.Duration
	}
	gauge(descDeltaPeriod, period.Seconds())
	for kind, leaseName := range map[string]string{"full": druidv1alpha1.FullSnapshotLeaseName(etcd), "delta": druidv1alpha1.DeltaSnapshotLeaseName(etcd)} {
		lease := &coordinationv1.Lease{}
		if err := reader.Get(ctx, types.NamespacedName{Namespace: ns, Name: leaseName}, lease); err != nil {
			continue // not created yet, or gone with the store: no snapshot to report
		}
		if lease.Spec.RenewTime == nil || lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
			continue // no snapshot recorded yet
		}
		gauge(descSnapshotTime, float64(lease.Spec.RenewTime.UnixNano())/1e9, kind)
	}
}
