package etcddata

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
	"github.com/gardener-etcd/gardener-etcd/test/support/oldetcd"
)

func TestDataVersionUnopenable(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    DataVersion
		want string // a substring of the reason; "" means openable
	}{
		{"fresh directory", DataVersion{}, ""},
		{"etcd 3.7 data", DataVersion{StorageVersion: "3.7.0", Term: true, ConsistentIndex: 9}, ""},
		{"etcd 3.6 data", DataVersion{StorageVersion: "3.6.0", Term: true, ConsistentIndex: 9}, ""},
		{"etcd 3.6 cluster", DataVersion{StorageVersion: "3.6.0", Term: true, ConsistentIndex: 9, ClusterVersion: "3.6.0"}, ""},
		{"etcd 3.5 cluster", DataVersion{Term: true, ConsistentIndex: 9, ClusterVersion: "3.5.0"}, "cluster version 3.5.0"},
		{"cluster version not decided yet", DataVersion{Term: true, ConsistentIndex: 9, ClusterVersion: "3.0.0"}, ""},
		// etcd 3.7 before its version monitor wrote the storage version, or restored by etcdutl.
		{"no storage version yet", DataVersion{Term: true, ConsistentIndex: 9}, ""},
		{"v2 requests in the WAL", DataVersion{Term: true, ConsistentIndex: 9, LegacyEntries: 2, LastLegacyIndex: 4}, "2 entries"},
		{"v2 requests after a 3.6 run", DataVersion{StorageVersion: "3.6.0", Term: true, ConsistentIndex: 30, LegacyEntries: 2, LastLegacyIndex: 4}, "etcd v2 requests"},
		{"etcd 3.4 database", DataVersion{ConsistentIndex: 9}, "etcd 3.4 or older"},
		{"newer etcd", DataVersion{StorageVersion: "3.8.0", Term: true, ConsistentIndex: 9}, "newer than this etcd"},
		{"garbage storage version", DataVersion{StorageVersion: "x", Term: true, ConsistentIndex: 9}, "does not parse"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.v.Unopenable()
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("Unopenable() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestStepVersions(t *testing.T) {
	for _, tc := range []struct {
		name    string
		v       DataVersion
		want    []string
		refused bool
	}{
		{"etcd 3.7 data", DataVersion{StorageVersion: "3.7.0", Term: true, ConsistentIndex: 9}, nil, false},
		{"etcd 3.5 data", DataVersion{Term: true, ConsistentIndex: 9, LegacyEntries: 2}, []string{"3.6"}, false},
		{"etcd 3.5 data after a 3.6 run", DataVersion{StorageVersion: "3.6.0", Term: true, ConsistentIndex: 9, LegacyEntries: 2}, []string{"3.6"}, false},
		{"etcd 3.4 WAL", DataVersion{Term: true, ConsistentIndex: 9, LegacyEntries: 3, Pre36Entries: 1}, []string{"3.5", "3.6"}, false},
		{"etcd 3.4 database", DataVersion{ConsistentIndex: 9}, []string{"3.5", "3.6"}, false},
		{"newer etcd", DataVersion{StorageVersion: "3.8.0", Term: true, ConsistentIndex: 9}, nil, true},
		{"newer etcd with v2 entries", DataVersion{StorageVersion: "3.8.0", Term: true, ConsistentIndex: 9, LegacyEntries: 1}, nil, true},
		{"etcd 3.5 cluster, no v2 entry left", DataVersion{Term: true, ConsistentIndex: 9, ClusterVersion: "3.5.0"}, []string{"3.6"}, false},
		{"etcd 3.5 member after a 3.6 run in a 3.5 cluster", DataVersion{StorageVersion: "3.6.0", Term: true, ConsistentIndex: 9, ClusterVersion: "3.5.0"}, []string{"3.6"}, false},
		{"etcd 3.6 cluster", DataVersion{StorageVersion: "3.6.0", Term: true, ConsistentIndex: 9, ClusterVersion: "3.6.0"}, nil, false},
		// etcd's placeholder before the cluster version is decided; a 3.7 member's volume had it (e2e).
		{"cluster version not decided yet", DataVersion{Term: true, ConsistentIndex: 9, ClusterVersion: "3.0.0"}, nil, false},
	} {
		got, err := tc.v.StepVersions()
		if !slices.Equal(got, tc.want) || (err != nil) != tc.refused || tc.refused && !errors.Is(err, ErrDataVersion) {
			t.Errorf("%s: StepVersions = %v, %v; want %v, refused %v", tc.name, got, err, tc.want, tc.refused)
		}
	}
}

func TestAppliedBy36(t *testing.T) {
	v2 := func(id uint64, method, path string) []byte {
		var b []byte
		b = protowire.AppendTag(b, 1, protowire.VarintType)
		b = protowire.AppendVarint(b, id)
		b = protowire.AppendTag(b, 2, protowire.BytesType)
		b = protowire.AppendString(b, method)
		b = protowire.AppendTag(b, 3, protowire.BytesType)
		b = protowire.AppendString(b, path)
		b = protowire.AppendTag(b, 4, protowire.BytesType)
		return protowire.AppendString(b, `{"name":"etcd-test-0"}`)
	}
	for _, tc := range []struct {
		name string
		data []byte
		want bool
	}{
		{"cluster version", v2(7, "PUT", "/0/version"), true},
		{"member attributes", v2(7, "PUT", "/0/members/8e9e05c52164694d/attributes"), true},
		{"quorum get", v2(7, "QGET", "/0/version"), false},
		{"another key", v2(7, "PUT", "/1/foo"), false},
		{"garbage", []byte{0xff, 0xff, 0xff}, false},
		// etcd 3.4's quorum get with an empty path decodes as an InternalRaftRequest with an ID.
		{"quorum get, empty path", v2(7, "QGET", ""), false},
	} {
		if got := appliedBy36(tc.data); got != tc.want {
			t.Errorf("%s: appliedBy36 = %v, want %v", tc.name, got, tc.want)
		}
		if isV3Request(tc.data) {
			t.Errorf("%s: taken for a v3 request", tc.name)
		}
	}
}

// Data that etcd 3.7 opens is not refused: 3.5 data whose last v2 request a snapshot covered (more entries
// than --snapshot-count, see wrapper.TestEmbeddedEtcdOnOldData), and our own.
func TestOpenableDataIsNotRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the old etcd binaries")
	}
	// etcd 3.7 would open it (its WAL holds no v2 request after its snapshot), but etcd upgrades one minor
	// version at a time: the cluster version its database records (3.5) asks for 3.6 first.
	snapshotted := oldetcd.WriteDataDir(t, filepath.Join(t.TempDir(), "data"),
		oldetcd.Write{Version: "3.5", Keys: 120, SnapshotCount: 100, Stop: oldetcd.Term})
	v, ok := InspectDataVersion(snapshotted.DataDir)
	if !ok || v.LegacyEntries != 0 || !strings.HasPrefix(v.ClusterVersion, "3.5") {
		t.Fatalf("3.5 data with every v2 request behind a snapshot: %+v, %v; want no v2 entries and cluster version 3.5", v, ok)
	}
	if steps, err := v.StepVersions(); err != nil || !slices.Equal(steps, []string{"3.6"}) {
		t.Errorf("StepVersions = %v, %v; want [3.6]", steps, err)
	}

	ours := etcdserver.StartProcess(t, etcdserver.ProcessConfig{DataDir: filepath.Join(t.TempDir(), "ours")})
	oursMember := oldetcd.Member{Name: ours.Config.Name, DataDir: ours.Config.DataDir, ClientURL: ours.Config.ClientURL, PeerURL: ours.Config.PeerURL}
	oldetcd.Put(t, oursMember, 0, 5)
	ours.Kill()
	v, ok = InspectDataVersion(ours.Config.DataDir)
	if !ok || v.Unopenable() != "" {
		t.Errorf("etcd 3.7 data: %+v, %v, reason %q", v, ok, v.Unopenable())
	}
	if v.ClusterVersion != "" && !strings.HasPrefix(v.ClusterVersion, "3.7") {
		t.Errorf("etcd 3.7 data records cluster version %q", v.ClusterVersion)
	}
}
