package initializer

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/httpapi"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/memberconfig"
	"github.com/gardener-etcd/gardener-etcd/test/etcdserver"
	"github.com/gardener-etcd/gardener-etcd/test/oldetcd"
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

// Issue 13: the initializer called a data directory written by etcd 3.5 (or 3.4) valid (case 3 or 6), and
// etcd 3.7 crash-looped on it. It must refuse it in both modes, whatever the cluster size, and leave it
// exactly as it was: nothing moved aside, nothing restored over.
func TestOldDataIsRefusedAndLeftAlone(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the old etcd binaries: seconds per case")
	}
	for _, tc := range []oldDataCase{
		{w: oldetcd.Write{Version: "3.5", Keys: 20, Stop: oldetcd.Kill}},
		{w: oldetcd.Write{Version: "3.5", Keys: 20, Stop: oldetcd.Term}},
		{w: oldetcd.Write{Version: "3.5", Keys: 20, Stop: oldetcd.Kill}, then36: true},
		{w: oldetcd.Write{Version: "3.4", Keys: 20, Stop: oldetcd.Kill}},
	} {
		t.Run(tc.name(), func(t *testing.T) {
			m := tc.write(t)
			v, ok := InspectDataVersion(m.DataDir)
			if !ok || v.LegacyEntries == 0 {
				t.Fatalf("InspectDataVersion = %+v, %v: want v2 entries found", v, ok)
			}
			if tc.then36 && v.StorageVersion == "" {
				t.Errorf("storage version after a 3.6 run is empty, want 3.6")
			}
			// etcd 3.6 applies 3.5's v2 requests, not all of 3.4's.
			if tc.w.Version == "3.5" && v.Pre36Entries != 0 || tc.w.Version == "3.4" && v.Pre36Entries == 0 {
				t.Errorf("etcd %s data: %d of %d v2 entries etcd 3.6 does not apply", tc.w.Version, v.Pre36Entries, v.LegacyEntries)
			}
			before := treeDigest(t, m.DataDir)
			for _, size := range []int{1, 3} {
				for _, mode := range []httpapi.Mode{httpapi.ModeFull, httpapi.ModeSanity} {
					in := oldDataInitializer(t, m, size)
					err := in.Initialize(t.Context(), mode)
					if !errors.Is(err, ErrDataVersion) {
						t.Errorf("%d members, %s: Initialize = %v (case %s), want ErrDataVersion", size, mode, err, in.State().Case)
					}
				}
			}
			if _, err := StartOnCopy(t.Context(), m.DataDir, t.TempDir()); !errors.Is(err, ErrDataVersion) || errors.Is(err, ErrNoValidData) {
				t.Errorf("StartOnCopy = %v, want ErrDataVersion (and not ErrNoValidData)", err)
			}
			if after := treeDigest(t, m.DataDir); !maps.Equal(before, after) {
				t.Errorf("the data directory changed:\nbefore %v\nafter  %v", before, after)
			}
			if aside := MovedAside(m.DataDir); len(aside) > 0 {
				t.Errorf("moved aside: %v", aside)
			}
		})
	}
}

// Data that etcd 3.7 opens is not refused: 3.5 data whose last v2 request a snapshot covered (more entries
// than --snapshot-count, see wrapper.TestEmbeddedEtcdOnOldData), and our own.
func TestOpenableDataIsNotRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the old etcd binaries")
	}
	snapshotted := oldetcd.WriteDataDir(t, filepath.Join(t.TempDir(), "data"),
		oldetcd.Write{Version: "3.5", Keys: 120, SnapshotCount: 100, Stop: oldetcd.Kill})
	if err := CheckDataVersion(snapshotted.DataDir); err != nil {
		t.Errorf("3.5 data with every v2 request behind a snapshot: %v", err)
	}

	ours := etcdserver.StartProcess(t, etcdserver.ProcessConfig{DataDir: filepath.Join(t.TempDir(), "ours")})
	oursMember := oldetcd.Member{Name: ours.Config.Name, DataDir: ours.Config.DataDir, ClientURL: ours.Config.ClientURL, PeerURL: ours.Config.PeerURL}
	oldetcd.Put(t, oursMember, 0, 5)
	ours.Kill()
	v, ok := InspectDataVersion(ours.Config.DataDir)
	if !ok || v.Unopenable() != "" {
		t.Errorf("etcd 3.7 data: %+v, %v, reason %q", v, ok, v.Unopenable())
	}
}

func oldDataInitializer(t *testing.T, m oldetcd.Member, size int) *Initializer {
	t.Helper()
	initial := memberconfig.InitialCluster{{Name: m.Name, PeerURLs: []string{m.PeerURL}}}
	for i := 1; i < size; i++ {
		peer := etcdserver.FreeURL(t)
		initial = append(initial, memberconfig.ClusterMember{Name: fmt.Sprintf("etcd-test-%d", i), PeerURLs: []string{peer.String()}})
	}
	in, err := New(Options{
		Member:         memberconfig.Member{Name: m.Name, PeerURLs: []string{m.PeerURL}, ClientURLs: []string{m.ClientURL}},
		InitialCluster: initial, DataDir: m.DataDir, ClusterToken: testToken,
		ProbeTimeout: time.Second, QuorumWait: time.Second, PollInterval: 200 * time.Millisecond, Log: testr.New(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// treeDigest maps every file below dir to its SHA-256 (directories to "dir").
func treeDigest(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			out[rel] = "dir"
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[rel] = fmt.Sprintf("%x", sha256.Sum256(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("%s is empty", dir)
	}
	return out
}

// With the etcd 3.5 and 3.6 binaries configured, a one-member cluster's 3.5 data is stepped through 3.6
// (3.4 data through 3.5 and 3.6) and then opens under etcd 3.7 with every key written under the old
// version; a larger cluster's is still only refused.
func TestStepThroughOlderEtcds(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the old etcd binaries and etcd 3.7 on their data")
	}
	bin35, err := oldetcd.Binary("3.5")
	if err != nil {
		t.Fatal(err)
	}
	bin36, err := oldetcd.Binary("3.6")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []oldDataCase{
		{w: oldetcd.Write{Version: "3.5", Keys: 20, Stop: oldetcd.Kill}},
		{w: oldetcd.Write{Version: "3.5", Keys: 20, Stop: oldetcd.Term}},
		{w: oldetcd.Write{Version: "3.5", Keys: 20, Stop: oldetcd.Kill}, then36: true},
		{w: oldetcd.Write{Version: "3.4", Keys: 20, Stop: oldetcd.Kill}},
		{w: oldetcd.Write{Version: "3.4", Keys: 20, Stop: oldetcd.Term}},
	} {
		t.Run(tc.name(), func(t *testing.T) {
			m := tc.write(t)
			before := treeDigest(t, m.DataDir)
			ha := oldDataInitializer(t, m, 3)
			ha.opts.Step35Binary, ha.opts.Step36Binary = bin35, bin36
			if err := ha.Initialize(t.Context(), httpapi.ModeFull); !errors.Is(err, ErrDataVersion) || !strings.Contains(err.Error(), "only a one-member cluster") {
				t.Fatalf("3 members: Initialize = %v, want ErrDataVersion, not stepped", err)
			}
			if after := treeDigest(t, m.DataDir); !maps.Equal(before, after) {
				t.Fatalf("3 members: the data directory changed")
			}

			in := oldDataInitializer(t, m, 1)
			in.opts.Step35Binary, in.opts.Step36Binary = bin35, bin36
			if err := in.Initialize(t.Context(), httpapi.ModeFull); err != nil {
				t.Fatalf("Initialize with the step: %v", err)
			}
			if in.State().Case != CaseRestartValid {
				t.Errorf("case %s, want %s", in.State().Case, CaseRestartValid)
			}
			v, ok := InspectDataVersion(m.DataDir)
			if !ok || v.LegacyEntries != 0 || !strings.HasPrefix(v.StorageVersion, "3.6") {
				t.Errorf("after the step: %+v, %v; want no v2 entries and storage version 3.6", v, ok)
			}
			if aside := MovedAside(m.DataDir); len(aside) > 0 {
				t.Errorf("moved aside: %v", aside)
			}

			// Our etcd (embedded 3.7, in a child process: a panic must not take the test binary down).
			ours := etcdserver.StartProcess(t, etcdserver.ProcessConfig{Name: m.Name, DataDir: m.DataDir, ClientURL: m.ClientURL, PeerURL: m.PeerURL})
			cli := oldetcd.Client(t, oldetcd.Member{ClientURL: ours.Config.ClientURL})
			resp, err := cli.Get(t.Context(), oldetcd.KeyPrefix, clientv3.WithPrefix())
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.Kvs) != tc.w.Keys {
				t.Fatalf("etcd 3.7 serves %d keys, want %d", len(resp.Kvs), tc.w.Keys)
			}
			for i, kv := range resp.Kvs {
				if string(kv.Key) != oldetcd.Key(i) || string(kv.Value) != oldetcd.Key(i) {
					t.Errorf("key %d: %s=%s, want %s=%s", i, kv.Key, kv.Value, oldetcd.Key(i), oldetcd.Key(i))
				}
			}
		})
	}
}

// oldDataCase is a data directory written by an old etcd, optionally run once by etcd 3.6 afterwards
// (which records storage version 3.6 but keeps the old entries in the WAL).
type oldDataCase struct {
	w      oldetcd.Write
	then36 bool
}

func (c oldDataCase) name() string {
	if c.then36 {
		return c.w.String() + ", then etcd 3.6"
	}
	return c.w.String()
}

// write creates the case's data directory below t's temporary directory.
func (c oldDataCase) write(t *testing.T) oldetcd.Member {
	t.Helper()
	m := oldetcd.WriteDataDir(t, filepath.Join(t.TempDir(), "data"), c.w)
	if c.then36 {
		if err := oldetcd.ForTest(t, "3.6", m).Stop(); err != nil {
			t.Fatal(err)
		}
	}
	return m
}
