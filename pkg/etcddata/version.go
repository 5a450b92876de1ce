package etcddata

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/coreos/go-semver/semver"
	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/version"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// ErrDataVersion is reported for a data directory that the etcd of this build (go.etcd.io/etcd/server/v3
// 3.7) cannot or must not open, because an older (or newer) etcd wrote it, and that is not stepped through
// the etcd minor versions in between (docs/design.md, "etcd version stepping"): nobody starts
// this etcd on it, moves, deletes or restores over it. The wrapper exits with the reason without starting
// etcd and checks again when its container restarts, so the member stays down but its data stays as it
// was; the sidecar fails its initialization with it for data no older etcd steps.
var ErrDataVersion = errors.New("the data directory was written by an etcd version this etcd cannot open")

// DataVersion is what a data directory tells about the etcd versions that wrote it.
//
// Our etcd (3.7) applies every normal WAL entry after the newest snapshot as a v3 request
// (etcdserverpb.InternalRaftRequest) and panics on any other ("proto: cannot parse invalid wire-format
// data" in applyAll): etcd 3.4 and 3.5 also logged v2 requests (pb.Request: the cluster version and member
// attributes they publish on every start), which etcd 3.6 still applied and 3.7 no longer decodes. They
// stay in the WAL until a raft snapshot covers them, by default only after 10,000 (3.6) or 100,000 (3.4,
// 3.5) entries. Which entries a WAL holds is the fact that decides, not the version number: a 3.5
// directory that one 3.6 run opened has storage version 3.6 and still the 3.5 entries.
type DataVersion struct {
	// StorageVersion is the database's storage version (the "storageVersion" key of the bbolt meta
	// bucket, "3.6", "3.7", …). etcd 3.6 and later write it once the cluster version is decided (a
	// moment after start); etcd 3.5 and older never do. Empty when absent.
	StorageVersion string
	// Term is set when the meta bucket holds the raft term beside the consistent index, which every etcd
	// since 3.5 writes with it; a database with a consistent index and no term was written by etcd 3.4.
	Term bool
	// ConsistentIndex is the raft index of the last entry applied to the database.
	ConsistentIndex uint64
	// ClusterVersion is the cluster version the database records (etcd 3.5 and later), "" when absent:
	// etcd upgrades one minor version at a time, so data of a 3.5 cluster runs under 3.6 first even when
	// no v2 entry is left in its WAL. 3.0.0 is etcd's placeholder before the cluster version is decided
	// (seen on etcd 3.7 data too) and tells nothing.
	ClusterVersion string
	// LegacyEntries counts the WAL's normal entries after its newest snapshot that are no v3 request, and
	// LastLegacyIndex is the raft index of the last of them.
	LegacyEntries   int
	LastLegacyIndex uint64
	// Pre36Entries counts those of them that etcd 3.6 refuses as well (it panics, "detected disallowed v2
	// WAL"): 3.6 applies only the v2 PUTs of the cluster version and of member attributes, while etcd 3.4
	// also logged other v2 requests (QGET, …). Such data needs etcd 3.5 first.
	Pre36Entries int
}

// ourMinor is the minor version of the etcd this build runs (3.7).
func ourMinor() minor {
	v := semver.New(version.Version)
	return minor{Major: v.Major, Minor: v.Minor}
}

// minor is a major.minor version; it prints as "3.7".
type minor struct{ Major, Minor int64 }

func (m minor) String() string { return fmt.Sprintf("%d.%d", m.Major, m.Minor) }

// Unopenable says why the etcd of this build must not be started on the directory, "" when it may.
func (v DataVersion) Unopenable() string {
	ours := ourMinor()
	switch {
	case v.LegacyEntries > 0:
		if v.Pre36Entries > 0 {
			return fmt.Sprintf("its WAL holds %d entries after its newest snapshot (the last at raft index %d) that are "+
				"etcd v2 requests, %d of them of kinds only etcd 3.5 and older apply (etcd 3.4 logged them); etcd %s "+
				"panics applying them, and so does etcd 3.6. Run etcd 3.5, then 3.6, on the directory as this "+
				"member, each until it has taken a snapshot, then start this etcd", v.LegacyEntries, v.LastLegacyIndex, v.Pre36Entries, ours)
		}
		return fmt.Sprintf("its WAL holds %d entries after its newest snapshot (the last at raft index %d) that are "+
			"etcd v2 requests, as etcd 3.5 and older log them; etcd %s panics applying them. Run etcd 3.6 "+
			"on the directory as this member until it has taken a snapshot, then start this etcd", v.LegacyEntries, v.LastLegacyIndex, ours)
	case v.StorageVersion == "" && v.ConsistentIndex > 0 && !v.Term:
		return fmt.Sprintf("its database has no raft term beside its consistent index: etcd 3.4 or older wrote it; "+
			"etcd upgrades one minor version at a time, so run etcd 3.5, then 3.6, on it before etcd %s", ours)
	}
	if cv, err := semver.NewVersion(v.ClusterVersion); err == nil && cv.Major == ours.Major && cv.Minor > 0 && cv.Minor < ours.Minor-1 {
		return fmt.Sprintf("its database records cluster version %s: etcd upgrades one minor version at a time, so etcd "+
			"%d.%d must run the cluster before etcd %s", v.ClusterVersion, ours.Major, ours.Minor-1, ours)
	}
	if v.StorageVersion != "" {
		sv, err := semver.NewVersion(v.StorageVersion)
		switch {
		case err != nil:
			return fmt.Sprintf("its storage version %q does not parse", v.StorageVersion)
		case sv.Major != ours.Major || sv.Minor > ours.Minor:
			return fmt.Sprintf("its storage version %s is newer than this etcd (%s); etcd downgrades only through its "+
				"downgrade API, one minor version at a time", v.StorageVersion, ours)
		}
	}
	return ""
}

// InspectDataVersion reads the data directory's DataVersion. ok is false when there is nothing to read
// (no member directory) or the WAL or database does not read: the decision table then judges the
// directory as it always did, and etcd would not start on it either.
func InspectDataVersion(dataDir string) (v DataVersion, ok bool) {
	v, exists, err := ReadDataVersion(dataDir)
	return v, exists && err == nil
}

// ReadDataVersion is InspectDataVersion for whoever starts etcd: exists is false only when there is no
// member directory; a WAL or database that does not read (or whose lock another process holds) is an
// error, never "nothing to check".
func ReadDataVersion(dataDir string) (v DataVersion, exists bool, err error) {
	if _, err := os.Stat(MemberDir(dataDir)); errors.Is(err, os.ErrNotExist) {
		return v, false, nil
	} else if err != nil {
		return v, true, err
	}
	w, err := ReadWAL(WALDir(dataDir))
	if err != nil {
		return v, true, fmt.Errorf("reading the WAL of %s: %w", dataDir, err)
	}
	db, err := ReadDB(DBPath(dataDir))
	if err != nil {
		return v, true, fmt.Errorf("reading the database of %s: %w", dataDir, err)
	}
	return DataVersion{
		StorageVersion: db.StorageVersion, Term: db.Term, ConsistentIndex: db.ConsistentIndex, ClusterVersion: db.ClusterVersion,
		LegacyEntries: w.LegacyEntries, LastLegacyIndex: w.LastLegacyIndex, Pre36Entries: w.Pre36Entries,
	}, true, nil
}

// CheckDataVersion returns an error wrapping ErrDataVersion when the etcd of this build must not be
// started on dataDir (DataVersion.Unopenable), nil otherwise.
func CheckDataVersion(dataDir string) error {
	v, ok := InspectDataVersion(dataDir)
	if !ok {
		return nil
	}
	if why := v.Unopenable(); why != "" {
		return fmt.Errorf("%w: %s: %s (storage version %q); the data is left as it is", ErrDataVersion, dataDir, why, v.StorageVersion)
	}
	return nil
}

// v2MemberAttributes matches the path of a member's attributes in etcd's v2 store, as etcd 3.6 matches it.
var v2MemberAttributes = regexp.MustCompile(`/0/members/[[:xdigit:]]{1,16}/attributes`)

// v2ClusterVersionPath is the path of the cluster version in etcd's v2 store.
const v2ClusterVersionPath = "/0/version"

// appliedBy36 tells whether a v2 request (etcd 3.5's pb.Request: ID = 1, Method = 2, Path = 3, …) is one
// etcd 3.6 applies: a PUT of the cluster version or of member attributes. Decoded from the wire format,
// since etcd 3.7's API no longer has the v2 message; data that does not decode is not applied by 3.6.
func appliedBy36(data []byte) bool {
	var method, path string
	for len(data) > 0 {
		num, typ, n := protowire.ConsumeTag(data)
		if n < 0 {
			return false
		}
		data = data[n:]
		if typ == protowire.BytesType && (num == 2 || num == 3) {
			b, m := protowire.ConsumeBytes(data)
			if m < 0 {
				return false
			}
			if num == 2 {
				method = string(b)
			} else {
				path = string(b)
			}
			data = data[m:]
			continue
		}
		m := protowire.ConsumeFieldValue(num, typ, data)
		if m < 0 {
			return false
		}
		data = data[m:]
	}
	return method == "PUT" && (path == v2ClusterVersionPath || v2MemberAttributes.MatchString(path))
}

// isV3Request tells whether a normal WAL entry's data is a v3 request as etcd 3.7 applies it: it decodes as
// an InternalRaftRequest, carries an ID or a header (etcd panics on one without either), and has no field 2,
// which etcd 3.7 reserves ("v2"). A raw v2 request (etcd 3.4 and 3.5's pb.Request: ID = 1, Method = 2, …)
// may decode as an InternalRaftRequest with an ID when its other fields happen to fit (etcd 3.4's QGET
// with an empty path does); its method in field 2 gives it away.
func isV3Request(data []byte) bool {
	var r etcdserverpb.InternalRaftRequest
	if proto.Unmarshal(data, &r) != nil {
		return false
	}
	if r.GetID() == 0 && r.GetHeader() == nil {
		return false
	}
	for len(data) > 0 {
		num, typ, n := protowire.ConsumeTag(data)
		if n < 0 {
			return false
		}
		if num == 2 {
			return false
		}
		m := protowire.ConsumeFieldValue(num, typ, data[n:])
		if m < 0 {
			return false
		}
		data = data[n+m:]
	}
	return true
}

// StepVersions are the etcd minor versions, oldest first, that must run on the directory as this member,
// each until it has taken a snapshot after the entries the next one does not apply, before the etcd of
// this build opens it: nil when it opens the directory already; etcd 3.5 data (v2 requests in the WAL
// that etcd 3.6 applies, storage version none or 3.6) steps through 3.6, etcd 3.4 data (v2 requests 3.6
// refuses, or a database without term) through 3.5 and then 3.6. An error (wrapping ErrDataVersion) when
// no older etcd steps it: a storage version newer than this etcd's, or one that does not parse.
//
// The wrapper runs the steps (wrapper.Options.Step35Binary, Step36Binary): it is where etcd runs, and a
// member of a larger cluster can only step in the cluster, serving, while the other members step too.
func (v DataVersion) StepVersions() ([]string, error) {
	why := v.Unopenable()
	switch {
	case why == "":
		return nil, nil
	case v.StorageVersion != "" && !strings.HasPrefix(v.StorageVersion, "3.6"):
	case v.Pre36Entries > 0 || v.StorageVersion == "" && v.ConsistentIndex > 0 && !v.Term:
		return []string{"3.5", "3.6"}, nil
	case v.LegacyEntries > 0:
		return []string{"3.6"}, nil
	case v.ClusterVersion != "":
		// Only a 3.5 cluster's data gets here (3.4's has no term): 3.6 once, never an older etcd on data
		// this etcd might have written.
		if cv, err := semver.NewVersion(v.ClusterVersion); err == nil && cv.Major == 3 && cv.Minor == 5 {
			return []string{"3.6"}, nil
		}
	}
	return nil, fmt.Errorf("%w: %s (storage version %q); no older etcd steps it, the data is left as it is", ErrDataVersion, why, v.StorageVersion)
}

// WrittenBy35OrOlder tells whether the directory holds nothing a newer etcd than 3.5 wrote, so that etcd
// 3.5 may run on it: a database of etcd 3.4 (no raft term beside the consistent index), a WAL with the v2
// requests only etcd 3.5 and older log, or a recorded cluster version of 3.5 or older — and no storage
// version, which every etcd since 3.6 writes. A directory that tells neither way (a term, no cluster version
// decided yet, no v2 request: etcd 3.5 stopped in its first moments, or any newer etcd before it wrote its
// storage version) is not: running an older etcd on a newer one's data is a downgrade etcd does not allow.
func (v DataVersion) WrittenBy35OrOlder() bool {
	if v.StorageVersion != "" {
		return false
	}
	if cv, err := semver.NewVersion(v.ClusterVersion); err == nil && !cv.Equal(semver.Version{Major: 3}) {
		return cv.Major == 3 && cv.Minor <= 5
	}
	return v.ConsistentIndex > 0 && !v.Term || v.LegacyEntries > 0
}
