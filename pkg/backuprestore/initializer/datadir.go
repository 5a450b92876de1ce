package initializer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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

// DataFacts describe the member's data directory.
type DataFacts struct {
	// HasMember is set when the directory holds anything of an etcd member (a member directory).
	HasMember bool
	// MetadataValid is set when the WAL is readable and names a member ID and cluster ID.
	MetadataValid bool
	MemberID      uint64
	ClusterID     uint64
	// DataValid is set when the structure is complete, the WAL reads to its end and the database opens.
	DataValid bool
	// Revision is the revision etcd serves once started on the directory (valid data only): the
	// database's, unless WALAhead and the decision needed more (see Initializer.Observe).
	Revision int64
	// WALAhead is set when the WAL holds writes after the database's consistent index: a crash left the
	// database behind, and etcd applies them from the WAL when it starts.
	WALAhead bool
	// OwnerOK is set when the directory has no owner marker or the marker names this Etcd.
	OwnerOK bool
	// Problem says why metadata or data is not valid, for the log.
	Problem string
}

// boltOpenTimeout bounds waiting for the database's file lock: a lock held means another etcd still
// uses the directory, which the initializer must not touch.
const boltOpenTimeout = 2 * time.Second

func memberDir(dataDir string) string { return filepath.Join(dataDir, "member") }
func walDir(dataDir string) string    { return filepath.Join(dataDir, "member", "wal") }
func dbPath(dataDir string) string    { return filepath.Join(dataDir, "member", "snap", "db") }

// InspectDataDir gathers the data directory's facts. full adds the expensive checks: reading the whole
// WAL and opening the database; without it (sanity mode) the structure is taken as valid data.
func InspectDataDir(dataDir, owner string, full bool) DataFacts {
	f := DataFacts{OwnerOK: ownerMatches(dataDir, owner)}
	if !f.OwnerOK {
		f.Problem = "the owner marker names another Etcd"
	}
	if _, err := os.Stat(memberDir(dataDir)); err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			f.Problem = err.Error()
			f.HasMember = true // unreadable: something is there, treat it as data that is not valid
		}
		return f
	}
	f.HasMember = true
	for _, p := range []string{walDir(dataDir), dbPath(dataDir)} {
		if _, err := os.Stat(p); err != nil {
			f.Problem = fmt.Sprintf("incomplete member directory: %v", err)
			return f
		}
	}
	if !full {
		f.MetadataValid, f.DataValid = true, true
		return f
	}
	w, err := readWAL(walDir(dataDir))
	if err != nil {
		f.Problem = fmt.Sprintf("WAL: %v", err)
		return f
	}
	f.MetadataValid, f.MemberID, f.ClusterID = true, w.memberID, w.clusterID
	db, err := readDB(dbPath(dataDir))
	if err != nil {
		f.Problem = fmt.Sprintf("database: %v", err)
		return f
	}
	f.DataValid, f.Revision, f.WALAhead = true, db.revision, w.lastNormalIndex > db.consistentIndex
	return f
}

// walFacts are what the initializer reads from a WAL.
type walFacts struct {
	memberID, clusterID uint64
	// lastNormalIndex is the raft index of the last entry carrying a request (a write, a lease or
	// compaction request, …); leader no-ops and membership changes do not count.
	lastNormalIndex uint64
	// legacyEntries counts the normal entries that are no v3 request (etcd 3.5 and older's v2 requests,
	// see DataVersion), lastLegacyIndex is the index of the last of them.
	legacyEntries   int
	lastLegacyIndex uint64
	// pre36Entries counts the legacy entries etcd 3.6 does not apply either (DataVersion.Pre36Entries).
	pre36Entries int
}

// readWAL reads the WAL from its newest snapshot entry to the end (as etcd does when it starts) and
// returns the member and cluster ID recorded in it and the index of its last request; a WAL that does not
// read to the end is an error.
func readWAL(dir string) (walFacts, error) {
	lg := zap.NewNop()
	snaps, err := wal.ValidSnapshotEntries(lg, dir)
	if err != nil {
		return walFacts{}, err
	}
	start := &walpb.Snapshot{}
	if len(snaps) > 0 {
		start = snaps[len(snaps)-1]
	}
	w, err := wal.OpenForRead(lg, dir, start)
	if err != nil {
		return walFacts{}, err
	}
	defer w.Close()
	raw, _, ents, err := w.ReadAll()
	if err != nil {
		return walFacts{}, err
	}
	var md etcdserverpb.Metadata
	if err := proto.Unmarshal(raw, &md); err != nil {
		return walFacts{}, fmt.Errorf("metadata: %w", err)
	}
	if md.GetNodeID() == 0 || md.GetClusterID() == 0 {
		return walFacts{}, errors.New("metadata without member or cluster ID")
	}
	f := walFacts{memberID: md.GetNodeID(), clusterID: md.GetClusterID()}
	for _, e := range ents {
		if e.GetType() == raftpb.EntryNormal && len(e.GetData()) > 0 {
			f.lastNormalIndex = e.GetIndex()
			if !isV3Request(e.GetData()) {
				f.legacyEntries++
				f.lastLegacyIndex = e.GetIndex()
				if !appliedBy36(e.GetData()) {
					f.pre36Entries++
				}
			}
		}
	}
	return f, nil
}

// dbFacts are what the initializer reads from the bbolt database.
type dbFacts struct {
	// revision is the database's revision as etcd computes it on open.
	revision int64
	// consistentIndex is the raft index of the last entry applied to the database.
	consistentIndex uint64
	// members is the number of members the database's membership holds.
	members int
	// storageVersion is the meta bucket's storage version ("" when absent); term is set when the meta
	// bucket holds the raft term of the consistent index (see DataVersion).
	storageVersion string
	term           bool
}

// dbRevision is readDB's revision.
func dbRevision(path string) (int64, error) {
	f, err := readDB(path)
	return f.revision, err
}

// readDB opens etcd's bbolt database read-only and returns its revision as etcd computes it on open
// (the highest revision in the key bucket, raised to a compaction revision — the newest tombstones may
// be compacted away —, at least 1), its consistent index and the size of its membership.
func readDB(path string) (dbFacts, error) {
	db, err := bolt.Open(path, 0o400, &bolt.Options{ReadOnly: true, Timeout: boltOpenTimeout})
	if err != nil {
		return dbFacts{}, err
	}
	defer db.Close()
	f := dbFacts{revision: 1}
	err = db.View(func(tx *bolt.Tx) error {
		keys := tx.Bucket([]byte("key"))
		if keys == nil {
			return errors.New(`no "key" bucket: not an etcd database`)
		}
		if k, _ := keys.Cursor().Last(); len(k) >= 8 {
			f.revision = max(f.revision, int64(binary.BigEndian.Uint64(k[:8])))
		}
		if meta := tx.Bucket(schema.Meta.Name()); meta != nil {
			for _, name := range [][]byte{schema.FinishedCompactKeyName, schema.ScheduledCompactKeyName} {
				if v := meta.Get(name); len(v) >= 8 {
					f.revision = max(f.revision, int64(binary.BigEndian.Uint64(v[:8])))
				}
			}
			if v := meta.Get(schema.MetaConsistentIndexKeyName); len(v) >= 8 {
				f.consistentIndex = binary.BigEndian.Uint64(v[:8])
			}
			f.storageVersion = string(meta.Get(schema.MetaStorageVersionName))
			f.term = len(meta.Get(schema.MetaTermKeyName)) >= 8
		}
		if members := tx.Bucket(schema.Members.Name()); members != nil {
			f.members = members.Stats().KeyN
		}
		return nil
	})
	return f, err
}

// asideSuffix starts the name of a moved-aside data directory: <data-dir>.invalid-<UTC time>.
const asideSuffix = ".invalid"

// asideTimeFormat is the UTC time in the name of a moved-aside directory (ISO 8601 basic, sortable, no
// colons).
const asideTimeFormat = "20060102T150405Z"

// moveAside renames the data directory to <dataDir>.invalid-<UTC time>, a name not used before (a
// counter is appended when the second is taken), so that bad data stays available for inspection and
// nothing moved aside earlier is ever deleted or replaced; the data directory is then absent. It
// returns "" when there is no data directory.
func moveAside(dataDir string, now time.Time) (string, error) {
	if _, err := os.Lstat(dataDir); errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	base := filepath.Clean(dataDir) + asideSuffix + "-" + now.UTC().Format(asideTimeFormat)
	aside := base
	for n := 2; ; n++ {
		// rename(2) would replace an empty directory of that name; only a name nothing has is used.
		if _, err := os.Lstat(aside); errors.Is(err, os.ErrNotExist) {
			break
		} else if err != nil {
			return "", fmt.Errorf("checking %s: %w", aside, err)
		}
		aside = fmt.Sprintf("%s-%d", base, n)
	}
	if err := os.Rename(dataDir, aside); err != nil {
		return "", fmt.Errorf("moving %s aside: %w", dataDir, err)
	}
	return aside, nil
}

// MovedAside lists the directories the initializer moved aside from dataDir that still exist (also the
// single <data-dir>.invalid of earlier versions), oldest first: the sidecar reports them on the member
// lease so that an operator finds data that was not used.
func MovedAside(dataDir string) []string {
	matches, _ := filepath.Glob(filepath.Clean(dataDir) + asideSuffix + "*")
	var out []string
	for _, m := range matches {
		if fi, err := os.Lstat(m); err == nil && fi.IsDir() {
			out = append(out, m)
		}
	}
	slices.Sort(out)
	return out
}
