package initializer

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/memberconfig"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcddata"
	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
	"github.com/gardener-etcd/gardener-etcd/test/support/backuptest"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
	"github.com/gardener-etcd/gardener-etcd/test/support/oldetcd"
)

// The initializer once called a data directory written by etcd 3.5 (or 3.4) valid and etcd 3.7
// crash-looped on it. The sidecar now leaves such data to the wrapper, which steps it through the older
// etcds (or refuses it): in both modes and whatever the cluster size, the sidecar takes its decision on
// the directory as it is and leaves it exactly as it was: nothing stepped, moved aside or restored over.
// Opening it with this etcd in the sidecar's process (StartOnCopy) is refused.
func TestOldDataIsLeftToTheWrapper(t *testing.T) {
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
			v, ok := etcddata.InspectDataVersion(m.DataDir)
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
			wantSteps := []string{"3.6"}
			if tc.w.Version == "3.4" {
				wantSteps = []string{"3.5", "3.6"}
			}
			if steps, err := v.StepVersions(); err != nil || !slices.Equal(steps, wantSteps) {
				t.Errorf("StepVersions = %v, %v; want %v", steps, err, wantSteps)
			}
			before := treeDigest(t, m.DataDir)
			for _, mode := range []podwire.InitMode{podwire.InitFull, podwire.InitSanity} {
				in := oldDataInitializer(t, m, 1)
				if err := in.Initialize(t.Context(), mode); err != nil || in.State().Case != CaseRestartValid {
					t.Errorf("1 member, %s: Initialize = %v, case %s; want %s", mode, err, in.State().Case, CaseRestartValid)
				}
				// Nobody else answers: whatever the decision, the directory stays as it is.
				_ = oldDataInitializer(t, m, 3).Initialize(t.Context(), mode)
			}
			if _, err := StartOnCopy(t.Context(), m.DataDir, t.TempDir()); !errors.Is(err, etcddata.ErrDataVersion) || errors.Is(err, ErrNoValidData) {
				t.Errorf("StartOnCopy = %v, want etcddata.ErrDataVersion (and not ErrNoValidData)", err)
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

// The sidecar used to step old data itself; now a one-member crash image of etcd 3.5 whose database lags
// both its WAL and the backup (the case in which it replays the WAL with this etcd, which an older etcd's
// WAL would make panic) is reused, untouched, and left to the wrapper: its WAL is this member's own log,
// which holds everything the backups hold.
func TestOldCrashImageBehindTheBackupIsReused(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the old etcd binaries")
	}
	m := oldetcd.NewMember(t, filepath.Join(t.TempDir(), "data"))
	// A backend batch interval of an hour: nothing but a snapshot commits the database before the kill.
	server := oldetcd.ForTest(t, "3.5", m, "--backend-batch-interval=1h", "--backend-batch-limit=1000000000")
	cli := oldetcd.Client(t, m)
	store := backuptest.Local(t)
	s := startSnapshotter(t, cli, store)
	putN(t, cli, "backed-up/", 20)
	backup := takeDelta(t, s)
	s.Stop()
	putN(t, cli, "wal-only/", 5)
	server.Kill()
	if rev, err := etcddata.DBRevision(dbPath(m.DataDir)); err != nil || rev >= backup.LastRevision {
		t.Fatalf("precondition: the database should lag the backup (revision %d, %v; backup %d)", rev, err, backup.LastRevision)
	}
	before := treeDigest(t, m.DataDir)
	in := oldDataInitializer(t, m, 1)
	in.opts.Store = store.SnapStore
	if err := in.Initialize(t.Context(), podwire.InitFull); err != nil || in.State().Case != CaseRestartValid {
		t.Fatalf("Initialize = %v, case %s; want %s", err, in.State().Case, CaseRestartValid)
	}
	if after := treeDigest(t, m.DataDir); !maps.Equal(before, after) {
		t.Errorf("the data directory changed")
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
