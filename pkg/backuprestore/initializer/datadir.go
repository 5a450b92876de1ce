package initializer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/gardener-etcd/gardener-etcd/pkg/etcddata"
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

func memberDir(dataDir string) string { return etcddata.MemberDir(dataDir) }
func walDir(dataDir string) string    { return etcddata.WALDir(dataDir) }
func dbPath(dataDir string) string    { return etcddata.DBPath(dataDir) }

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
	w, err := etcddata.ReadWAL(walDir(dataDir))
	if err != nil {
		f.Problem = fmt.Sprintf("WAL: %v", err)
		return f
	}
	f.MetadataValid, f.MemberID, f.ClusterID = true, w.MemberID, w.ClusterID
	db, err := etcddata.ReadDB(dbPath(dataDir))
	if err != nil {
		f.Problem = fmt.Sprintf("database: %v", err)
		return f
	}
	f.DataValid, f.Revision, f.WALAhead = true, db.Revision, w.LastNormalIndex > db.ConsistentIndex
	return f
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
