package restorer_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"go.etcd.io/etcd/server/v3/embed"
	"golang.org/x/sync/errgroup"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshotter"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
	"github.com/gardener-etcd/gardener-etcd/test/etcdserver"
)

// Benchmark workload: a full snapshot of benchKeys keys, then revisions over the same keys (one put
// per revision). BENCH_RESTORE_REVISIONS overrides the number of delta revisions.
const (
	benchKeys      = 10000
	benchValueSize = 256
	benchWriters   = 32
)

func benchRevisions() int {
	if n, err := strconv.Atoi(os.Getenv("BENCH_RESTORE_REVISIONS")); err == nil && n > 0 {
		return n
	}
	return 200000
}

// openLocalStore opens the benchmark's directory store.
func openLocalStore(ctx context.Context, root string) (snapstore.SnapStore, error) {
	return snapstore.New(ctx, snapstore.Config{Provider: druidv1alpha1.StorageProviderLocal, Container: "bkp", Prefix: "bench", LocalRoot: root}, logr.Discard())
}

// generateBenchStore backs up the workload into a directory store below root with the real
// snapshotter. The source etcd runs without fsync: only the backup's contents matter here.
func generateBenchStore(b *testing.B, root string, revisions int) snapshot.Stream {
	b.Helper()
	ctx := b.Context()
	src := etcdserver.StartCluster(b, 1, func(c *embed.Config) { c.UnsafeNoFsync = true; c.QuotaBackendBytes = 8 << 30 })
	cli := src.Client(b)
	value := func(rng *rand.Rand) string {
		v := make([]byte, benchValueSize)
		for i := range v {
			v[i] = byte('a' + rng.IntN(26))
		}
		return string(v)
	}
	write := func(n int, seed uint64) {
		var next sync.Mutex
		i := 0
		g, gctx := errgroup.WithContext(ctx)
		for w := range benchWriters {
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			g.Go(func() error {
				for {
					next.Lock()
					k := i
					i++
					next.Unlock()
					if k >= n {
						return nil
					}
					if _, err := cli.Put(gctx, fmt.Sprintf("/registry/bench/%05d", k%benchKeys), value(rng)); err != nil {
						return err
					}
				}
			})
		}
		if err := g.Wait(); err != nil {
			b.Fatal(err)
		}
	}
	write(benchKeys, 1)
	store, err := openLocalStore(ctx, root)
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	cfg := snapshotter.Default()
	cfg.Schedule, cfg.GarbageCollectionPeriod = "", 0
	s, err := snapshotter.New(snapshotter.Options{Config: cfg, Client: cli, Store: store, Log: logr.Discard()})
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Start(ctx); err != nil { // the full snapshot
		b.Fatal(err)
	}
	write(revisions, 2)
	if _, err := s.TakeDelta(ctx); err != nil {
		b.Fatal(err)
	}
	s.Stop()
	snaps, err := store.List(ctx)
	if err != nil {
		b.Fatal(err)
	}
	stream, err := snapshot.LatestStream(snaps)
	if err != nil {
		b.Fatal(err)
	}
	return stream
}
