package initializer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/server/v3/storage/wal"
	"go.etcd.io/etcd/server/v3/storage/wal/walpb"
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
	// Revision is the database's etcd revision (valid data only).
	Revision int64
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
	memberID, clusterID, err := readWALMetadata(walDir(dataDir))
	if err != nil {
		f.Problem = fmt.Sprintf("WAL: %v", err)
		return f
	}
	f.MetadataValid, f.MemberID, f.ClusterID = true, memberID, clusterID
	rev, err := dbRevision(dbPath(dataDir))
	if err != nil {
		f.Problem = fmt.Sprintf("database: %v", err)
		return f
	}
	f.DataValid, f.Revision = true, rev
	return f
}

// readWALMetadata reads the WAL from its newest snapshot entry to the end (as etcd does when it
// starts) and returns the member and cluster ID recorded in it; a WAL that does not read to the end is
// an error.
func readWALMetadata(dir string) (memberID, clusterID uint64, err error) {
	lg := zap.NewNop()
	snaps, err := wal.ValidSnapshotEntries(lg, dir)
	if err != nil {
		return 0, 0, err
	}
	start := &walpb.Snapshot{}
	if len(snaps) > 0 {
		start = snaps[len(snaps)-1]
	}
	w, err := wal.OpenForRead(lg, dir, start)
	if err != nil {
		return 0, 0, err
	}
	defer w.Close()
	raw, _, _, err := w.ReadAll()
	if err != nil {
		return 0, 0, err
	}
	var md etcdserverpb.Metadata
	if err := proto.Unmarshal(raw, &md); err != nil {
		return 0, 0, fmt.Errorf("metadata: %w", err)
	}
	if md.GetNodeID() == 0 || md.GetClusterID() == 0 {
		return 0, 0, errors.New("metadata without member or cluster ID")
	}
	return md.GetNodeID(), md.GetClusterID(), nil
}

// dbRevision opens etcd's bbolt database read-only and returns its revision as etcd computes it on
// open: the highest revision in the key bucket, raised to a compaction revision (the newest tombstones
// may be compacted away), at least 1.
func dbRevision(path string) (int64, error) {
	db, err := bolt.Open(path, 0o400, &bolt.Options{ReadOnly: true, Timeout: boltOpenTimeout})
	if err != nil {
		return 0, err
	}
	defer db.Close()
	rev := int64(1)
	err = db.View(func(tx *bolt.Tx) error {
		keys := tx.Bucket([]byte("key"))
		if keys == nil {
			return errors.New(`no "key" bucket: not an etcd database`)
		}
		if k, _ := keys.Cursor().Last(); len(k) >= 8 {
			rev = max(rev, int64(binary.BigEndian.Uint64(k[:8])))
		}
		if meta := tx.Bucket([]byte("meta")); meta != nil {
			for _, name := range []string{"finishedCompactRev", "scheduledCompactRev"} {
				if v := meta.Get([]byte(name)); len(v) >= 8 {
					rev = max(rev, int64(binary.BigEndian.Uint64(v[:8])))
				}
			}
		}
		return nil
	})
	return rev, err
}

// moveAside renames the data directory to <dataDir>.invalid, replacing an older one, so that bad data
// stays available for inspection without filling the volume, and the data directory is absent.
func moveAside(dataDir string) (string, error) {
	if _, err := os.Stat(dataDir); errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	aside := filepath.Clean(dataDir) + ".invalid"
	if err := os.RemoveAll(aside); err != nil {
		return "", fmt.Errorf("removing the previous %s: %w", aside, err)
	}
	if err := os.Rename(dataDir, aside); err != nil {
		return "", fmt.Errorf("moving %s aside: %w", dataDir, err)
	}
	return aside, nil
}
