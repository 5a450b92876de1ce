package snapshotter_test

import (
	"context"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshotter"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
	"github.com/gardener-etcd/gardener-etcd/test/support/backuptest"
	"github.com/gardener-etcd/gardener-etcd/test/support/minioserver"
)

// Garbage collection on an S3 bucket with Object Lock (immutable backups) deletes the snapshots whose
// retention has ended, leaves those still locked, reports them (etcdbr_snapshot_gc_locked) and succeeds;
// it counts only what it deleted, and deletes no other snapshot in place of a locked one, in this run or
// the next. The next run does not ask the store again about a snapshot whose retention it knows to last.
func TestGarbageCollectionLeavesLockedSnapshots(t *testing.T) {
	minio := minioserver.Start(t, minioserver.Config{Region: "us-east-1"})
	minio.CreateObjectLockBucket(t, "immutable")
	s3Store := openS3Store(t, minio, "immutable")
	store := &countingDeletes{SnapStore: s3Store}

	now := time.Now()
	at := func(age time.Duration) time.Time { return now.Add(-age) }
	full := func(rev int64, age time.Duration) *snapshot.Snapshot {
		return snapshot.NewFull(rev, at(age), snapshot.CompressionNone, false)
	}
	incr := func(from, to int64, age time.Duration) *snapshot.Snapshot {
		return snapshot.NewIncr(from, to, at(age), snapshot.CompressionNone)
	}
	save := func(snaps ...*snapshot.Snapshot) {
		for _, s := range snaps {
			if err := store.Save(t.Context(), s, strings.NewReader("snapshot "+s.SnapName)); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Uploaded before the bucket has a default retention: their retention has ended, as it were.
	save(full(10, 10*time.Hour), incr(11, 15, 9*time.Hour), full(30, 6*time.Hour))
	minio.SetDefaultRetention(t, "immutable", 1)
	save(full(20, 8*time.Hour), incr(21, 25, 7*time.Hour), full(40, 4*time.Hour), incr(41, 45, 3*time.Hour),
		full(50, 2*time.Hour), incr(51, 55, time.Hour))

	registry := prometheus.NewRegistry()
	cfg := snapshotter.Default()
	cfg.Schedule, cfg.GarbageCollectionPeriod = "", 0
	cfg.GarbageCollectionPolicy, cfg.MaxBackups = snapshotter.GCLimitBased, 2
	s, err := snapshotter.New(snapshotter.Options{Config: cfg, Store: store, Metrics: snapshotter.NewMetrics(registry), Log: testr.New(t)})
	if err != nil {
		t.Fatal(err)
	}
	// The policy keeps Full-40 and Full-50 with the deltas after Full-40; of the rest, Full-20 and Incr-21
	// are locked.
	want := []string{"Full-20", "Incr-21", "Full-40", "Incr-41", "Full-50", "Incr-51"}
	for run := 1; run <= 2; run++ {
		store.deletes = 0
		if err := s.CollectGarbage(t.Context()); err != nil {
			t.Fatalf("run %d: garbage collection failed on locked snapshots: %v", run, err)
		}
		if got := storedNames(t, store); !slices.Equal(got, want) {
			t.Fatalf("run %d: the store holds %v, want %v", run, got, want)
		}
		for _, m := range []struct {
			name   string
			labels map[string]string
			want   float64
		}{
			{"etcdbr_snapshot_gc_total", map[string]string{"kind": "Full", "succeeded": "true"}, 2},
			{"etcdbr_snapshot_gc_total", map[string]string{"kind": "Incr", "succeeded": "true"}, 1},
			{"etcdbr_snapshot_gc_total", map[string]string{"kind": "Full", "succeeded": "false"}, 0},
			{"etcdbr_snapshot_gc_total", map[string]string{"kind": "Incr", "succeeded": "false"}, 0},
			{"etcdbr_snapshot_gc_locked", map[string]string{"kind": "Full"}, 1},
			{"etcdbr_snapshot_gc_locked", map[string]string{"kind": "Incr"}, 1},
			{"etcdbr_snapshotter_failure", map[string]string{"error": "GC"}, 0},
		} {
			if got := metricValue(t, registry, m.name, m.labels); got != m.want {
				t.Errorf("run %d: %s%v = %v, want %v", run, m.name, m.labels, got, m.want)
			}
		}
		// Run 1 deletes three and tries the two locked; run 2 knows their retention lasts a day.
		if want := map[int]int{1: 5, 2: 0}[run]; store.deletes != want {
			t.Errorf("run %d: %d deletes sent to the store, want %d", run, store.deletes, want)
		}
	}
}

// countingDeletes counts the deletes that reach the store it wraps.
type countingDeletes struct {
	snapstore.SnapStore
	deletes int
}

func (c *countingDeletes) Delete(ctx context.Context, snap *snapshot.Snapshot) error {
	c.deletes++
	return c.SnapStore.Delete(ctx, snap)
}

// SaveStaged and SaveExpected pass the wrapped store's through (snapshotter.New needs a StagedSaver).
func (c *countingDeletes) SaveStaged(ctx context.Context, r io.Reader, name func() (*snapshot.Snapshot, error)) (*snapshot.Snapshot, error) {
	return c.SnapStore.(snapstore.StagedSaver).SaveStaged(ctx, r, name)
}

func (c *countingDeletes) SaveExpected(ctx context.Context, r io.Reader, expected *snapshot.Snapshot, name func() (*snapshot.Snapshot, error)) (*snapshot.Snapshot, error) {
	return c.SnapStore.(snapstore.StagedSaver).SaveExpected(ctx, r, expected, name)
}

// openS3Store opens an S3 store of bucket on minio with its root credentials.
func openS3Store(t *testing.T, minio *minioserver.Server, bucket string) snapstore.SnapStore {
	t.Helper()
	dir := backuptest.SecretDir(t, map[string]string{"region": "us-east-1", "endpoint": minio.Endpoint, "s3ForcePathStyle": "true",
		"accessKeyID": minioserver.RootUser, "secretAccessKey": minioserver.RootPassword})
	store, err := snapstore.New(t.Context(), snapstore.Config{Provider: "aws", Container: bucket, Prefix: "shoot--a/etcd-main", SecretDir: dir}, testr.New(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	return store
}

// storedNames lists the store as Kind-StartRevision names, by last revision.
func storedNames(t *testing.T, store snapstore.SnapStore) []string {
	t.Helper()
	snaps, err := store.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range snaps {
		first := s.StartRevision
		if s.Kind == snapshot.KindFull {
			first = s.LastRevision
		}
		names = append(names, string(s.Kind)+"-"+strconv.FormatInt(first, 10))
	}
	return names
}
