package restorer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"golang.org/x/sync/errgroup"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshotter"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
	"github.com/gardener-etcd/gardener-etcd/test/support/backuptest"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

// Benchmark workload: a full snapshot of benchKeys keys, then revisions over the same keys (one put
// per revision). BENCH_RESTORE_REVISIONS ("20000,200000") overrides the sizes measured.
const (
	benchKeys      = 10000
	benchValueSize = 256
	benchWriters   = 32
)

// benchCacheEnv names a directory where generated workloads are kept and reused by later runs (the 2M
// workload takes minutes to write through etcd); unset, each run generates its own in a temporary
// directory.
const benchCacheEnv = "BENCH_RESTORE_CACHE"

func benchSizes(b *testing.B) []int {
	spec := os.Getenv("BENCH_RESTORE_REVISIONS")
	if spec == "" {
		return []int{20000, 200000, 2000000}
	}
	var sizes []int
	for f := range strings.SplitSeq(spec, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			b.Fatalf("BENCH_RESTORE_REVISIONS: %q is not a positive number", f)
		}
		sizes = append(sizes, n)
	}
	return sizes
}

// benchWorkload is a generated store and the source's keyspace at its last revision, which every
// restore of it must reproduce key by key.
type benchWorkload struct {
	Root   string // the directory store's root
	Stream snapshot.Stream
	Want   backuptest.State
}

// benchSource is the etcd a workload is written to and backed up from.
type benchSource struct {
	// Name tells cached workloads of different sources apart ("" for the default source).
	Name string
	// Start runs the source and returns a client of it; the source stops when b ends.
	Start func(b *testing.B) *clientv3.Client
}

// embeddedSource is our etcd (3.7), embedded, without fsync: only the backup's contents matter here.
var embeddedSource = benchSource{Start: func(b *testing.B) *clientv3.Client {
	src := etcdserver.StartCluster(b, 1, func(c *embed.Config) { c.UnsafeNoFsync = true; c.QuotaBackendBytes = 8 << 30 })
	return src.Client(b)
}}

// loadOrGenerateWorkload returns the workload of the given size backed up from source, from the cache
// when there is one.
func loadOrGenerateWorkload(b *testing.B, revisions int, source benchSource) benchWorkload {
	b.Helper()
	cache := os.Getenv(benchCacheEnv)
	if cache == "" {
		root := b.TempDir()
		stream, want := generateBenchStore(b, root, revisions, source)
		return benchWorkload{Root: root, Stream: stream, Want: want}
	}
	name := strconv.Itoa(revisions)
	if source.Name != "" {
		name += "-" + source.Name
	}
	root := filepath.Join(cache, name)
	wantPath := filepath.Join(root, "want.json")
	if data, err := os.ReadFile(wantPath); err == nil {
		w := benchWorkload{Root: root}
		if err := json.Unmarshal(data, &w.Want); err != nil {
			b.Fatalf("%s: %v", wantPath, err)
		}
		w.Stream = listBenchStream(b, root)
		return w
	}
	if err := os.RemoveAll(root); err != nil { // an interrupted generation
		b.Fatal(err)
	}
	stream, want := generateBenchStore(b, root, revisions, source)
	data, err := json.Marshal(want)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(wantPath, data, 0o600); err != nil {
		b.Fatal(err)
	}
	return benchWorkload{Root: root, Stream: stream, Want: want}
}

func listBenchStream(b *testing.B, root string) snapshot.Stream {
	b.Helper()
	store, err := openLocalStore(b.Context(), root)
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	snaps, err := store.List(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	stream, err := snapshot.LatestStream(snaps)
	if err != nil {
		b.Fatal(err)
	}
	return stream
}

// The benchmark's directory store: <root>/<benchContainer>/<benchPrefix>, the Local provider's layout
// when $HOME is root (how the etcdbrctl binaries are pointed at it).
const (
	benchContainer = "bkp"
	benchPrefix    = "bench"
)

// openLocalStore opens the benchmark's directory store.
func openLocalStore(ctx context.Context, root string) (snapstore.SnapStore, error) {
	return snapstore.New(ctx, snapstore.Config{Provider: druidv1alpha1.StorageProviderLocal, Container: benchContainer, Prefix: benchPrefix, LocalRoot: root}, logr.Discard())
}

// generateBenchStore writes the workload to source and backs it up into a directory store below root
// with the real snapshotter; it returns the stream and the source's keyspace at the last revision.
func generateBenchStore(b *testing.B, root string, revisions int, source benchSource) (snapshot.Stream, backuptest.State) {
	b.Helper()
	ctx := b.Context()
	cli := source.Start(b)
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
	stream := listBenchStream(b, root)
	return stream, backuptest.StateAt(b, cli, stream.LastRevision())
}
