package etcddata

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/server/v3/storage/schema"
	"go.etcd.io/etcd/server/v3/storage/wal"
	"go.etcd.io/etcd/server/v3/storage/wal/walpb"
	"go.etcd.io/raft/v3/raftpb"
	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"
)

// MemberDir, WALDir and DBPath are the parts of etcd's data directory dataDir.
func MemberDir(dataDir string) string { return filepath.Join(dataDir, "member") }
func WALDir(dataDir string) string    { return filepath.Join(dataDir, "member", "wal") }
func DBPath(dataDir string) string    { return filepath.Join(dataDir, "member", "snap", "db") }

// boltOpenTimeout bounds waiting for the database's file lock: a lock held means another etcd still
// uses the directory, which nobody else must touch.
const boltOpenTimeout = 2 * time.Second

// WALFacts are what a WAL tells before etcd opens it.
type WALFacts struct {
	MemberID, ClusterID uint64
	// LastNormalIndex is the raft index of the last entry carrying a request (a write, a lease or
	// compaction request, …); leader no-ops and membership changes do not count.
	LastNormalIndex uint64
	// LegacyEntries counts the normal entries that are no v3 request (etcd 3.5 and older's v2 requests,
	// see DataVersion), LastLegacyIndex is the index of the last of them.
	LegacyEntries   int
	LastLegacyIndex uint64
	// Pre36Entries counts the legacy entries etcd 3.6 does not apply either (DataVersion.Pre36Entries).
	Pre36Entries int
	// ConfChangePeerURLs are the peer URLs that the WAL's membership changes (a member added, as a learner
	// too, or its peer URLs updated) name, in the WAL's order.
	ConfChangePeerURLs []string
}

// ReadWAL reads the WAL from its newest snapshot entry to the end (as etcd does when it starts) and
// returns the member and cluster ID recorded in it and the index of its last request; a WAL that does not
// read to the end is an error.
func ReadWAL(dir string) (WALFacts, error) {
	lg := zap.NewNop()
	snaps, err := wal.ValidSnapshotEntries(lg, dir)
	if err != nil {
		return WALFacts{}, err
	}
	start := &walpb.Snapshot{}
	if len(snaps) > 0 {
		start = snaps[len(snaps)-1]
	}
	w, err := wal.OpenForRead(lg, dir, start)
	if err != nil {
		return WALFacts{}, err
	}
	defer w.Close()
	raw, _, ents, err := w.ReadAll()
	if err != nil {
		return WALFacts{}, err
	}
	var md etcdserverpb.Metadata
	if err := proto.Unmarshal(raw, &md); err != nil {
		return WALFacts{}, fmt.Errorf("metadata: %w", err)
	}
	if md.GetNodeID() == 0 || md.GetClusterID() == 0 {
		return WALFacts{}, errors.New("metadata without member or cluster ID")
	}
	f := WALFacts{MemberID: md.GetNodeID(), ClusterID: md.GetClusterID()}
	for _, e := range ents {
		if e.GetType() == raftpb.EntryConfChange {
			f.ConfChangePeerURLs = append(f.ConfChangePeerURLs, confChangePeerURLs(e.GetData())...)
		}
		if e.GetType() == raftpb.EntryNormal && len(e.GetData()) > 0 {
			f.LastNormalIndex = e.GetIndex()
			if !isV3Request(e.GetData()) {
				f.LegacyEntries++
				f.LastLegacyIndex = e.GetIndex()
				if !appliedBy36(e.GetData()) {
					f.Pre36Entries++
				}
			}
		}
	}
	return f, nil
}

// DBFacts are what the bbolt database tells before etcd opens it.
type DBFacts struct {
	// Revision is the database's Revision as etcd computes it on open.
	Revision int64
	// ConsistentIndex is the raft index of the last entry applied to the database.
	ConsistentIndex uint64
	// Members is the number of Members the database's membership holds, MemberPeerURLs their peer URLs.
	Members        int
	MemberPeerURLs []string
	// StorageVersion is the meta bucket's storage version ("" when absent); Term is set when the meta
	// bucket holds the raft Term of the consistent index (see DataVersion).
	StorageVersion string
	Term           bool
	// ClusterVersion is the cluster version the database records ("cluster" bucket; etcd 3.5 and later
	// write it once the cluster version is decided), "" when absent.
	ClusterVersion string
}

// DBRevision is ReadDB's revision.
func DBRevision(path string) (int64, error) {
	f, err := ReadDB(path)
	return f.Revision, err
}

// ReadDB opens etcd's bbolt database read-only and returns its Revision as etcd computes it on open
// (the highest Revision in the key bucket, raised to a compaction Revision — the newest tombstones may
// be compacted away —, at least 1), its consistent index and the size of its membership.
func ReadDB(path string) (DBFacts, error) {
	db, err := bolt.Open(path, 0o400, &bolt.Options{ReadOnly: true, Timeout: boltOpenTimeout})
	if err != nil {
		return DBFacts{}, err
	}
	defer db.Close()
	f := DBFacts{Revision: 1}
	err = db.View(func(tx *bolt.Tx) error {
		keys := tx.Bucket([]byte("key"))
		if keys == nil {
			return errors.New(`no "key" bucket: not an etcd database`)
		}
		if k, _ := keys.Cursor().Last(); len(k) >= 8 {
			f.Revision = max(f.Revision, int64(binary.BigEndian.Uint64(k[:8])))
		}
		if meta := tx.Bucket(schema.Meta.Name()); meta != nil {
			for _, name := range [][]byte{schema.FinishedCompactKeyName, schema.ScheduledCompactKeyName} {
				if v := meta.Get(name); len(v) >= 8 {
					f.Revision = max(f.Revision, int64(binary.BigEndian.Uint64(v[:8])))
				}
			}
			if v := meta.Get(schema.MetaConsistentIndexKeyName); len(v) >= 8 {
				f.ConsistentIndex = binary.BigEndian.Uint64(v[:8])
			}
			f.StorageVersion = string(meta.Get(schema.MetaStorageVersionName))
			f.Term = len(meta.Get(schema.MetaTermKeyName)) >= 8
		}
		if c := tx.Bucket(schema.Cluster.Name()); c != nil {
			f.ClusterVersion = string(c.Get(schema.ClusterClusterVersionKeyName))
		}
		if m := tx.Bucket(schema.Members.Name()); m != nil {
			f.Members = m.Stats().KeyN
			_ = m.ForEach(func(_, v []byte) error {
				f.MemberPeerURLs = append(f.MemberPeerURLs, memberPeerURLs(v)...)
				return nil
			})
		}
		return nil
	})
	return f, err
}
