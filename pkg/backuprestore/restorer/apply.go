package restorer

import (
	"fmt"
	"os"
	"time"

	"github.com/coreos/go-semver/semver"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/pkg/v3/traceutil"
	"go.etcd.io/etcd/server/v3/lease"
	"go.etcd.io/etcd/server/v3/storage/backend"
	"go.etcd.io/etcd/server/v3/storage/mvcc"
	"go.uber.org/zap"
)

// Batching of the replay: etcd's backend commits after this many writes or this much time, whichever
// first. Without fsync a commit is cheap, but a bigger batch keeps bbolt's page rewrites down; the
// batch lives in memory until committed.
const (
	replayBatchLimit    = 50000
	replayBatchInterval = 10 * time.Second
)

// clusterVersion satisfies the lessor's need to know the cluster version (it decides about lease
// checkpointing, which a lessor that is never promoted does not do).
type clusterVersion struct{}

func (clusterVersion) Version() *semver.Version { return semver.New("3.7.0") }

// replayer applies delta events to a database file through etcd's mvcc store.
type replayer struct {
	path     string
	be       backend.Backend
	lessor   lease.Lessor
	kv       mvcc.KV
	leaseTTL int64
	missing  int
	skipped  int64
}

// openReplayer opens the database for the replay. Its lessor is never promoted, so no lease expires
// however long the replay takes: a demoted lessor keeps every lease forever.
func openReplayer(path string, leaseTTL time.Duration) *replayer {
	cfg := backend.DefaultBackendConfig(zap.NewNop())
	cfg.Path = path
	cfg.BatchLimit, cfg.BatchInterval = replayBatchLimit, replayBatchInterval
	cfg.UnsafeNoFsync = true // the file is fsynced once at the end (close)
	be := backend.New(cfg)
	lessor := lease.NewLessor(zap.NewNop(), be, clusterVersion{}, lease.LessorConfig{MinLeaseTTL: 1})
	kv := mvcc.NewStore(zap.NewNop(), be, lessor, mvcc.StoreConfig{})
	return &replayer{path: path, be: be, lessor: lessor, kv: kv, leaseTTL: int64(leaseTTL / time.Second)}
}

// revision is the store's current revision.
func (r *replayer) revision() int64 {
	return r.kv.Rev()
}

// apply writes the events of one revision as one write transaction, which makes it exactly that
// revision, and checks it became the expected one.
func (r *replayer) apply(rev int64, events []*mvccpb.Event) error {
	if cur := r.kv.Rev(); rev != cur+1 {
		return fmt.Errorf("revision %d does not follow the store's revision %d", rev, cur)
	}
	for _, ev := range events {
		if id := lease.LeaseID(ev.Kv.Lease); ev.Type == mvccpb.PUT && id != lease.NoLease && r.lessor.Lookup(id) == nil {
			if _, err := r.lessor.Grant(id, r.leaseTTL); err != nil {
				return fmt.Errorf("creating lease %x of key %q at revision %d: %w", id, ev.Kv.Key, rev, err)
			}
			r.missing++
		}
	}
	txn := r.kv.Write(traceutil.TODO())
	for _, ev := range events {
		switch ev.Type {
		case mvccpb.PUT:
			txn.Put(ev.Kv.Key, ev.Kv.Value, lease.LeaseID(ev.Kv.Lease))
		case mvccpb.DELETE:
			txn.DeleteRange(ev.Kv.Key, nil)
		default:
			txn.End()
			return fmt.Errorf("unknown event type %v at revision %d", ev.Type, rev)
		}
	}
	txn.End()
	if got := r.kv.Rev(); got != rev {
		return fmt.Errorf("applying revision %d left the store at revision %d", rev, got)
	}
	return nil
}

// close commits, closes and fsyncs the database.
func (r *replayer) close() error {
	r.be.ForceCommit()
	r.lessor.Stop()
	if err := r.kv.Close(); err != nil {
		return err
	}
	if err := r.be.Close(); err != nil {
		return err
	}
	return syncFile(r.path)
}

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
