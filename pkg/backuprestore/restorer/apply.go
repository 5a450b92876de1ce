package restorer

import (
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/server/v3/lease"
	"go.etcd.io/etcd/server/v3/lease/leasepb"
	"go.etcd.io/etcd/server/v3/storage/backend"
	"go.etcd.io/etcd/server/v3/storage/mvcc"
	"go.etcd.io/etcd/server/v3/storage/schema"
	"google.golang.org/protobuf/proto"
)

// replayCommitBytes is how much is written to the database between commits. A bbolt write
// transaction holds the pages it changed in memory until it commits, so this bounds the replay's
// memory whatever the number of revisions (records, their nodes and the pages written at the commit:
// about three times this); commits are cheap without fsync.
const replayCommitBytes = 4 << 20

// tombstoneMark ends the bucket key of a deletion (see mvcc.IsTombstone, checked in init).
const tombstoneMark = 't'

func init() {
	if k := append(mvcc.RevToBytes(mvcc.Revision{Main: 1}, mvcc.NewRevBytes()), tombstoneMark); !mvcc.IsTombstone(k) {
		panic("restorer: etcd's tombstone key format changed")
	}
}

// keyState is what the next write of a live key depends on.
type keyState struct {
	create  int64 // revision the key was created at
	version int64 // number of puts since its creation
}

// replayer applies delta events to a member database the way etcd's mvcc store writes them, directly
// into its key bucket: a put is stored at (revision, sub) with the key's create revision kept while
// it lives and its version counted up from 1, a delete as a tombstone; the sub revision counts the
// changes within one revision. These are the rules of mvcc's write transaction (kvstore_txn.go), and
// the records are the ones it writes (same bucket keys, same protobuf), so etcd opens the result as if
// it had applied the revisions itself. Only the live keys' create revision and version are held in
// memory, not an index of every revision, so memory does not grow with the number of revisions.
//
// Leases that keys refer to but the database does not hold are created with leaseTTL, as etcd's lessor
// would grant them. Nothing expires during a replay: no lessor runs.
type replayer struct {
	db       *bolt.DB
	tx       *bolt.Tx // the open write transaction
	keys     *bolt.Bucket
	live     map[string]*keyState
	leases   map[int64]bool
	leaseTTL int64
	rev      int64 // the database's revision
	sub      int64 // the sub revision of the last change written at rev
	written  int   // bytes since the last commit
	missing  int
	skipped  int64
	arena    []byte // bucket keys and records of the open transaction
	kv       mvccpb.KeyValue
}

// arenaChunk is the allocation unit of the bucket keys and records written: bbolt keeps the slices
// given to Put until the transaction commits, so each write needs its own bytes, and carving them out
// of large chunks saves an allocation per write.
const arenaChunk = 1 << 20

// alloc returns n bytes that stay untouched until the next commit.
func (r *replayer) alloc(n int) []byte {
	if len(r.arena)+n > cap(r.arena) {
		r.arena = make([]byte, 0, max(arenaChunk, n))
	}
	end := len(r.arena) + n
	b := r.arena[len(r.arena):end:end]
	r.arena = r.arena[:end]
	return b
}

// openReplayer opens the member database at path and reads its state: the revision, the live keys
// and the leases.
func openReplayer(path string, leaseTTL time.Duration) (*replayer, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{
		NoSync:         true, // synced once at the end (close)
		NoGrowSync:     true,
		NoFreelistSync: true, // as etcd: the freelist is rebuilt on open
		FreelistType:   bolt.FreelistMapType,
		// Address space only, as etcd's backend reserves it: without it bbolt remaps (copying out
		// every page it holds in memory) each time the growing file outgrows the mapping.
		InitialMmapSize: int(backend.InitialMmapSize),
	})
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	r := &replayer{db: db, live: map[string]*keyState{}, leases: map[int64]bool{}, leaseTTL: int64(leaseTTL / time.Second)}
	if err := db.View(r.load); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if err := r.begin(); err != nil {
		_ = db.Close()
		return nil, err
	}
	return r, nil
}

// load reads the revision as etcd's store computes it on start (the last revision written, at least 1,
// or a later compaction mark), the state of every live key and the lease IDs.
func (r *replayer) load(tx *bolt.Tx) error {
	keys := tx.Bucket(schema.Key.Name())
	if keys == nil {
		return errors.New("no key bucket: not an etcd database")
	}
	r.rev = 1 // etcd's store starts at revision 1 (an empty key bucket)
	c := keys.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		r.rev = mvcc.BytesToRev(k).Main
		var kv mvccpb.KeyValue
		if err := proto.Unmarshal(v, &kv); err != nil {
			return fmt.Errorf("record at revision %d: %w", r.rev, err)
		}
		if mvcc.IsTombstone(k) {
			delete(r.live, string(kv.Key))
		} else {
			r.live[string(kv.Key)] = &keyState{create: kv.CreateRevision, version: kv.Version}
		}
	}
	btx := boltTx{tx}
	if rev, ok := mvcc.UnsafeReadFinishedCompact(btx); ok {
		r.rev = max(r.rev, rev)
	}
	if rev, ok := mvcc.UnsafeReadScheduledCompact(btx); ok {
		r.rev = max(r.rev, rev)
	}
	for _, l := range schema.MustUnsafeGetAllLeases(btx) {
		r.leases[l.ID] = true
	}
	return nil
}

func (r *replayer) begin() error {
	tx, err := r.db.Begin(true)
	if err != nil {
		return err
	}
	r.tx, r.keys, r.written, r.arena = tx, tx.Bucket(schema.Key.Name()), 0, nil
	schema.UnsafeCreateLeaseBucket(boltTx{tx})
	return nil
}

// revision is the database's revision.
func (r *replayer) revision() int64 {
	return r.rev
}

// apply writes one event of revision rev, which must be the database's revision (another change of
// it) or the next one.
func (r *replayer) apply(rev int64, ev *mvccpb.Event) error {
	switch rev {
	case r.rev:
		r.sub++
	case r.rev + 1:
		r.rev, r.sub = rev, 0
	default:
		return fmt.Errorf("revision %d does not follow the database's revision %d", rev, r.rev)
	}
	key := ev.Kv.Key
	tombstone := ev.Type == mvccpb.DELETE
	r.kv.Reset()
	switch ev.Type {
	case mvccpb.PUT:
		st := r.live[string(key)]
		if st == nil {
			st = &keyState{create: rev}
			r.live[string(key)] = st
		}
		st.version++
		r.kv.Key, r.kv.Value, r.kv.CreateRevision, r.kv.ModRevision, r.kv.Version, r.kv.Lease = key, ev.Kv.Value, st.create, rev, st.version, ev.Kv.Lease
		r.ensureLease(ev.Kv.Lease)
	case mvccpb.DELETE:
		if r.live[string(key)] == nil {
			return fmt.Errorf("revision %d deletes key %q, which does not exist", rev, key)
		}
		delete(r.live, string(key))
		r.kv.Key = key
	default:
		return fmt.Errorf("unknown event type %v at revision %d", ev.Type, rev)
	}
	bucketKey := r.alloc(bucketKeyLen)[:0]
	bucketKey = mvcc.RevToBytes(mvcc.Revision{Main: rev, Sub: r.sub}, bucketKey[:bucketKeyLen-1])
	if tombstone {
		bucketKey = append(bucketKey, tombstoneMark)
	}
	size := proto.Size(&r.kv)
	record, err := (proto.MarshalOptions{UseCachedSize: true}).MarshalAppend(r.alloc(size)[:0], &r.kv)
	if err != nil {
		return fmt.Errorf("encoding revision %d: %w", rev, err)
	}
	r.keys.FillPercent = seqFillPercent
	if err := r.keys.Put(bucketKey, record); err != nil {
		return fmt.Errorf("writing revision %d: %w", rev, err)
	}
	r.written += len(bucketKey) + len(record)
	if r.written >= replayCommitBytes {
		return r.commit()
	}
	return nil
}

// bucketKeyLen is the length of a tombstone's bucket key, one more than a revision's
// (mvcc.NewRevBytes has room for it).
var bucketKeyLen = cap(mvcc.NewRevBytes())

// ensureLease creates a lease a key refers to that the database does not hold.
func (r *replayer) ensureLease(id int64) {
	if lease.LeaseID(id) == lease.NoLease || r.leases[id] {
		return
	}
	schema.MustUnsafePutLease(boltTx{r.tx}, &leasepb.Lease{ID: id, TTL: r.leaseTTL})
	r.leases[id] = true
	r.missing++
}

func (r *replayer) commit() error {
	if err := r.tx.Commit(); err != nil {
		return fmt.Errorf("committing at revision %d: %w", r.rev, err)
	}
	return r.begin()
}

// close commits, syncs and closes the database.
func (r *replayer) close() error {
	err := r.tx.Commit()
	if err == nil {
		err = r.db.Sync()
	}
	return errors.Join(err, r.db.Close())
}

// abort drops the uncommitted changes and closes the database (which is thrown away).
func (r *replayer) abort() {
	_ = r.tx.Rollback()
	_ = r.db.Close()
}
