package snapshotter_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshotter"
	"github.com/gardener-etcd/gardener-etcd/test/support/backuptest"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
	"github.com/gardener-etcd/gardener-etcd/test/support/metricstest"
)

// leaseSpy records lease updates.
type leaseSpy struct {
	mu      sync.Mutex
	updates []string
	// names are the snapshot names of the updates, "" for a renewal without a new snapshot.
	names []string
}

func (l *leaseSpy) Update(_ context.Context, kind snapshot.Kind, rev int64, name string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.updates = append(l.updates, fmt.Sprintf("%s/%d", kind, rev))
	l.names = append(l.names, name)
	return nil
}

func (l *leaseSpy) lastName() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.names) == 0 {
		return ""
	}
	return l.names[len(l.names)-1]
}

func (l *leaseSpy) has(u string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, x := range l.updates {
		if x == u {
			return true
		}
	}
	return false
}

func start(t *testing.T, cli *clientv3.Client, store *backuptest.Store, mutate func(*snapshotter.Config), leases snapshotter.LeaseUpdater) *snapshotter.Snapshotter {
	t.Helper()
	return startWithMetrics(t, cli, store, mutate, leases, nil)
}

func startWithMetrics(t *testing.T, cli *clientv3.Client, store *backuptest.Store, mutate func(*snapshotter.Config), leases snapshotter.LeaseUpdater, metrics *snapshotter.Metrics) *snapshotter.Snapshotter {
	t.Helper()
	cfg := snapshotter.Default()
	cfg.Schedule, cfg.DeltaSnapshotPeriod, cfg.GarbageCollectionPeriod = "", time.Hour, 0
	if mutate != nil {
		mutate(&cfg)
	}
	s, err := snapshotter.New(snapshotter.Options{Config: cfg, Client: cli, WatchClient: watchClient(t, cli), Store: store.SnapStore,
		Leases: leases, Metrics: metrics, Log: logr.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// watchClient dials the members cli reaches as the sidecar dials its delta watch's connection.
func watchClient(t *testing.T, cli *clientv3.Client) *clientv3.Client {
	t.Helper()
	w, err := clientv3.New(clientv3.Config{Endpoints: cli.Endpoints(), DialTimeout: 5 * time.Second,
		DialOptions: snapshotter.WatchDialOptions(), Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	return w
}

func putN(t *testing.T, cli *clientv3.Client, prefix string, n, size int) int64 {
	t.Helper()
	var rev int64
	for i := range n {
		resp, err := cli.Put(t.Context(), fmt.Sprintf("%s%d", prefix, i), strings.Repeat("v", size))
		if err != nil {
			t.Fatal(err)
		}
		rev = resp.Header.Revision
	}
	return rev
}

func listStore(t *testing.T, store *backuptest.Store) []*snapshot.Snapshot {
	t.Helper()
	snaps, err := store.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return snaps
}

func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestNewLeaderContinuesFromTheStoreWithoutGap(t *testing.T) {
	cluster := etcdserver.StartCluster(t, 3, nil)
	cli := cluster.Client(t)
	store := backuptest.Local(t)
	first := start(t, cli, store, nil, nil)
	putN(t, cli, "a", 20, 10)
	d1, err := first.TakeDelta(t.Context())
	if err != nil || d1 == nil {
		t.Fatalf("TakeDelta: %v, %v", d1, err)
	}
	first.Stop()
	// The leader's member dies; writes go on without a backup leader.
	cluster.Leader().Stop()
	cli = cluster.Client(t)
	eventually(t, 30*time.Second, "a new etcd leader", func() bool { return cluster.Leader() != nil })
	want := putN(t, cli, "b", 15, 10)

	second := start(t, cli, store, nil, nil)
	d2, err := second.TakeDelta(t.Context())
	if err != nil || d2 == nil {
		t.Fatalf("TakeDelta: %v, %v", d2, err)
	}
	if d2.StartRevision != d1.LastRevision+1 || d2.LastRevision != want {
		t.Fatalf("new leader's delta %s does not continue %s up to %d", d2.SnapName, d1.SnapName, want)
	}
	stream, err := snapshot.LatestStream(listStore(t, store))
	if err != nil || len(stream.Deltas) != 2 || len(stream.Dropped) != 0 || stream.LastRevision() != want {
		t.Fatalf("stream = %+v, %v", stream, err)
	}
}

func TestCompactedWatchRevisionTakesAFullSnapshot(t *testing.T) {
	cli := etcdserver.Start(t).Client(t)
	store := backuptest.Local(t)
	first := start(t, cli, store, nil, nil)
	stored := first.LastRevision()
	first.Stop()
	rev := putN(t, cli, "k", 30, 10)
	if _, err := cli.Compact(t.Context(), rev); err != nil {
		t.Fatal(err)
	}
	start(t, cli, store, func(c *snapshotter.Config) { c.DeltaSnapshotPeriod = time.Second }, nil)
	eventually(t, 30*time.Second, "a full snapshot replacing the compacted revisions", func() bool {
		stream, err := snapshot.LatestStream(listStore(t, store))
		return err == nil && stream.Full != nil && stream.Full.LastRevision == rev && stream.Full.LastRevision > stored
	})
}

func TestDeltasAreCutOnMemoryLimitAndPeriodAndNotWhenEmpty(t *testing.T) {
	cli := etcdserver.Start(t).Client(t)
	store := backuptest.Local(t)
	spy := &leaseSpy{}
	s := start(t, cli, store, func(c *snapshotter.Config) { c.DeltaSnapshotMemoryLimit = 8 << 10 }, spy)
	// Memory limit: ~300 bytes per event, the period is an hour: only the limit can cut.
	rev := putN(t, cli, "m", 60, 200)
	eventually(t, 30*time.Second, "a delta cut by the memory limit", func() bool {
		for _, sn := range listStore(t, store) {
			if sn.Kind == snapshot.KindIncr {
				return true
			}
		}
		return false
	})
	if _, err := s.TakeDelta(t.Context()); err != nil {
		t.Fatal(err)
	}
	if s.LastRevision() != rev {
		t.Fatalf("stored revision %d, want %d", s.LastRevision(), rev)
	}
	before := len(listStore(t, store))
	// Nothing new: no object, but the delta lease is renewed with the stored revision.
	d, err := s.TakeDelta(t.Context())
	if err != nil || d != nil {
		t.Fatalf("empty TakeDelta = %v, %v; want nothing", d, err)
	}
	if got := len(listStore(t, store)); got != before {
		t.Fatalf("an empty delta wrote an object: %d → %d", before, got)
	}
	if !spy.has(fmt.Sprintf("Incr/%d", rev)) {
		t.Fatalf("lease updates %v lack Incr/%d", spy.updates, rev)
	}
	if got := spy.lastName(); got != "" {
		t.Fatalf("a renewal without a new snapshot named %q", got)
	}

	// Period: a second snapshotter with a 1s period cuts without being asked.
	s.Stop()
	rev = putN(t, cli, "p", 5, 10)
	start(t, cli, store, func(c *snapshotter.Config) { c.DeltaSnapshotPeriod = time.Second }, nil)
	eventually(t, 30*time.Second, "a delta cut by the period", func() bool {
		stream, err := snapshot.LatestStream(listStore(t, store))
		return err == nil && stream.LastRevision() == rev
	})
}

func TestFullSnapshotMetricsAndLeases(t *testing.T) {
	cli := etcdserver.Start(t).Client(t)
	store := backuptest.S3(t)
	spy := &leaseSpy{}
	registry := prometheus.NewRegistry()
	s := startWithMetrics(t, cli, store, nil, spy, snapshotter.NewMetrics(registry))
	rev := putN(t, cli, "k", 10, 100)
	full, err := s.TakeFull(t.Context(), true)
	if err != nil {
		t.Fatal(err)
	}
	if full.LastRevision != rev || !full.IsFinal || !strings.HasSuffix(full.SnapName, ".gz.final") {
		t.Fatalf("full snapshot %s, want revision %d, final, gzip", full.SnapName, rev)
	}
	if got := latestRevision(t, registry, "Full"); got != float64(rev) {
		t.Fatalf("latest full revision metric = %v, want %d", got, rev)
	}
	if got := latestRevision(t, registry, "Incr"); got != float64(rev) {
		t.Fatalf("latest delta revision metric = %v, want %d (buffered events were flushed first)", got, rev)
	}
	if got := metricValue(t, registry, "etcdbr_snapshot_latest_timestamp", map[string]string{"kind": "Full"}); got != float64(full.CreatedOn.Unix()) {
		t.Fatalf("etcdbr_snapshot_latest_timestamp{kind=Full} = %v, want %d", got, full.CreatedOn.Unix())
	}
	if !spy.has(fmt.Sprintf("Full/%d", rev)) {
		t.Fatalf("lease updates %v lack Full/%d", spy.updates, rev)
	}
	if got := spy.lastName(); got != full.SnapName {
		t.Fatalf("the leases were renewed naming %q, want the full snapshot %q", got, full.SnapName)
	}
	stream, err := snapshot.LatestStream(listStore(t, store))
	if err != nil || stream.Full.SnapName != full.SnapName {
		t.Fatalf("latest stream %+v, %v", stream, err)
	}
}

// etcdbr_snapshot_required{kind} follows the upstream sidecar: 1 while etcd holds revisions that no snapshot
// of the kind holds yet, 0 once one does. Gardener's backup alerts need both: an old snapshot alerts only
// when something changed since.
func TestSnapshotRequiredFollowsWhatTheStoreLacks(t *testing.T) {
	cli := etcdserver.Start(t).Client(t)
	registry := prometheus.NewRegistry()
	s := startWithMetrics(t, cli, backuptest.Local(t), nil, nil, snapshotter.NewMetrics(registry))
	required := func(kind string) float64 {
		return metricValue(t, registry, "etcdbr_snapshot_required", map[string]string{"kind": kind})
	}
	expect := func(when string, full, incr float64) {
		t.Helper()
		if gotFull, gotIncr := required("Full"), required("Incr"); gotFull != full || gotIncr != incr {
			t.Fatalf("%s: etcdbr_snapshot_required Full=%v Incr=%v, want Full=%v Incr=%v", when, gotFull, gotIncr, full, incr)
		}
	}
	expect("after the first full snapshot", 0, 0)

	watchedUpTo(t, s, putN(t, cli, "a", 3, 10))
	expect("with events waiting for a delta", 1, 1)

	if _, err := s.TakeDelta(t.Context()); err != nil {
		t.Fatal(err)
	}
	expect("after the delta", 1, 0)

	if _, err := s.TakeFull(t.Context(), false); err != nil {
		t.Fatal(err)
	}
	expect("after a full snapshot", 0, 0)
}

func TestGarbageCollectionOnTheStore(t *testing.T) {
	cli := etcdserver.Start(t).Client(t)
	store := backuptest.Local(t)
	registry := prometheus.NewRegistry()
	s := startWithMetrics(t, cli, store, func(c *snapshotter.Config) { c.GarbageCollectionPolicy, c.MaxBackups = snapshotter.GCLimitBased, 2 },
		nil, snapshotter.NewMetrics(registry))
	for i := range 3 {
		putN(t, cli, fmt.Sprintf("r%d-", i), 3, 10)
		if _, err := s.TakeDelta(t.Context()); err != nil {
			t.Fatal(err)
		}
		if _, err := s.TakeFull(t.Context(), false); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.CollectGarbage(t.Context()); err != nil {
		t.Fatal(err)
	}
	var fulls, deltas int
	for _, sn := range listStore(t, store) {
		if sn.Kind == snapshot.KindFull {
			fulls++
		} else {
			deltas++
		}
	}
	// 4 fulls (initial + 3) and 3 deltas: the newest 2 fulls stay, with the one delta after the older.
	if fulls != 2 || deltas != 1 {
		t.Fatalf("after GC: %d fulls, %d deltas; want 2 and 1", fulls, deltas)
	}
	// 2 fulls and 2 deltas went, as the upstream etcdbr_snapshot_gc_total{kind,succeeded} counts them.
	for kind, want := range map[string]float64{"Full": 2, "Incr": 2} {
		if got := metricValue(t, registry, "etcdbr_snapshot_gc_total", map[string]string{"kind": kind, "succeeded": "true"}); got != want {
			t.Errorf("etcdbr_snapshot_gc_total{kind=%s,succeeded=true} = %v, want %v", kind, got, want)
		}
	}
}

// latestRevision reads etcdbr_snapshot_latest_revision{kind} as a scrape would.
func latestRevision(t *testing.T, registry *prometheus.Registry, kind string) float64 {
	t.Helper()
	return metricValue(t, registry, "etcdbr_snapshot_latest_revision", map[string]string{"kind": kind})
}

// metricValue reads the gauge or counter name{labels} as a scrape would.
func metricValue(t *testing.T, registry *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	return metricstest.Value(t, registry, name, labels)
}

// watchedUpTo waits until the delta watch of s delivered revision rev.
func watchedUpTo(t *testing.T, s *snapshotter.Snapshotter, rev int64) {
	t.Helper()
	eventually(t, 10*time.Second, fmt.Sprintf("the watch to deliver revision %d", rev), func() bool { return s.WatchedRevision() >= rev })
}

// A term that ended because the cluster lost its leader stores its buffer without asking etcd, which
// answers nothing that needs a quorum any more.
func TestFlushStoresTheBufferWithoutEtcd(t *testing.T) {
	cluster := etcdserver.StartCluster(t, 1, nil)
	cli := cluster.Client(t)
	store := backuptest.Local(t)
	leases := &leaseSpy{}
	s := start(t, cli, store, nil, leases)
	stored := s.LastRevision()
	want := putN(t, cli, "a", 10, 10)
	watchedUpTo(t, s, want)
	s.Stop()
	cluster.Leader().Stop()

	snap, err := s.Flush(t.Context())
	if err != nil || snap == nil {
		t.Fatalf("Flush: %v, %v", snap, err)
	}
	if snap.StartRevision != stored+1 || snap.LastRevision != want {
		t.Fatalf("flushed %s, want revisions %d to %d", snap.SnapName, stored+1, want)
	}
	if !leases.has(fmt.Sprintf("%s/%d", snapshot.KindIncr, want)) {
		t.Fatalf("delta lease not renewed to %d: %v", want, leases.updates)
	}
	if again, err := s.Flush(t.Context()); err != nil || again != nil {
		t.Fatalf("second Flush stored %v, %v; nothing was left", again, err)
	}
}

// If another backup leader continued the deltas meanwhile, it stored these revisions itself: the old
// term's buffer is not stored a second time.
func TestFlushLeavesTheDeltasToALeaderThatContinued(t *testing.T) {
	cluster := etcdserver.StartCluster(t, 1, nil)
	cli := cluster.Client(t)
	store := backuptest.Local(t)
	first := start(t, cli, store, nil, nil)
	want := putN(t, cli, "a", 10, 10)
	watchedUpTo(t, first, want)
	first.Stop()

	second := start(t, cli, store, nil, nil)
	if d, err := second.TakeDelta(t.Context()); err != nil || d == nil || d.LastRevision != want {
		t.Fatalf("TakeDelta of the new leader: %v, %v", d, err)
	}
	if snap, err := first.Flush(t.Context()); err != nil || snap != nil {
		t.Fatalf("Flush after another leader continued stored %v, %v", snap, err)
	}
	stream, err := snapshot.LatestStream(listStore(t, store))
	if err != nil || len(stream.Deltas) != 1 || len(stream.Dropped) != 0 || stream.LastRevision() != want {
		t.Fatalf("stream = %+v, %v; want the new leader's delta only", stream, err)
	}
}

// etcdbr_snapshot_bytes_total{kind=Incr} grows by a delta's uncompressed size, as stored once
// decompressed, not by what its events were counted as against the memory limit.
func TestDeltaBytesMetricIsTheUncompressedDelta(t *testing.T) {
	cli := etcdserver.Start(t).Client(t)
	store := backuptest.Local(t)
	registry := prometheus.NewRegistry()
	s := startWithMetrics(t, cli, store, nil, nil, snapshotter.NewMetrics(registry))
	putN(t, cli, "k", 30, 200)
	delta, err := s.TakeDelta(t.Context())
	if err != nil || delta == nil {
		t.Fatalf("TakeDelta: %v, %v", delta, err)
	}
	rc, err := store.Fetch(t.Context(), delta)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	zr, err := snapshot.NewDecompressor(rc, delta.Compression())
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	stored, err := io.Copy(io.Discard, zr)
	if err != nil {
		t.Fatal(err)
	}
	if got := metricValue(t, registry, "etcdbr_snapshot_bytes_total", map[string]string{"kind": "Incr"}); got != float64(stored) {
		t.Fatalf("etcdbr_snapshot_bytes_total{kind=Incr} = %v, the delta %s holds %d bytes uncompressed", got, delta.SnapName, stored)
	}
}
