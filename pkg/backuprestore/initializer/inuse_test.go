package initializer

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
	"github.com/gardener-etcd/gardener-etcd/test/support/backuptest"
)

// siblings lists the entries next to the data directory whose names start with its own (moved-aside
// copies).
func siblings(t *testing.T, dataDir string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Dir(dataDir))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), filepath.Base(dataDir)+".") {
			out = append(out, e.Name())
		}
	}
	slices.Sort(out)
	return out
}

func countKeys(t *testing.T, cli *clientv3.Client) int64 {
	t.Helper()
	resp, err := cli.Get(t.Context(), "", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	return resp.Count
}

// An initialization requested while etcd runs on the data directory took the
// database lock held by etcd for "invalid data" and moved the directory aside under the running member
// (restoring the backup, or nothing, in its place). It must refuse and touch nothing, with and without
// backups, in both modes.
func TestInitializeRefusesWhileEtcdRunsOnTheDataDir(t *testing.T) {
	for _, withBackup := range []bool{false, true} {
		t.Run(map[bool]string{true: "backups", false: "no backups"}[withBackup], func(t *testing.T) {
			h := newHarness(t, 1)
			if withBackup {
				h.store = backuptest.Local(t).SnapStore
			}
			h.initialize(0, CaseBootstrapFirst)
			h.start(0)
			cli := h.nodes[0].etcd.Client(t)
			if withBackup {
				if err := h.initializer(0, nil).opts.TakeFullSnapshot(t.Context(), cli); err != nil {
					t.Fatal(err)
				}
			}
			putN(t, cli, "k/", 50)
			for _, mode := range []podwire.InitMode{podwire.InitFull, podwire.InitSanity} {
				in := h.initializer(0, nil)
				err := in.Initialize(t.Context(), mode)
				if !errors.Is(err, ErrDataDirInUse) {
					t.Fatalf("%s initialization while etcd runs on the data dir: %v, want %v", mode, err, ErrDataDirInUse)
				}
				if got := siblings(t, h.nodes[0].dataDir); len(got) > 0 {
					t.Fatalf("%s initialization moved data beside the data dir: %v", mode, got)
				}
				if n := countKeys(t, cli); n != 50 {
					t.Fatalf("after the %s initialization the member serves %d keys, want 50", mode, n)
				}
			}
			// The data dir is the one etcd runs on: restarting etcd serves the same keys.
			h.stop(0)
			h.start(0)
			if n := countKeys(t, h.nodes[0].etcd.Client(t)); n != 50 {
				t.Fatalf("after a restart the member serves %d keys, want 50", n)
			}
		})
	}
}

// A directory moved aside is never deleted or replaced by a later move-aside: each gets its own name.
func TestMovedAsideDataDirsAreAllKept(t *testing.T) {
	h := newHarness(t, 1)
	dataDir := h.nodes[0].dataDir
	var owners []string
	for _, foreign := range []string{"other/etcd-a", "other/etcd-b"} {
		h.initialize(0, CaseBootstrapFirst)
		h.start(0)
		putN(t, h.nodes[0].etcd.Client(t), foreign+"/", 5)
		h.stop(0)
		if err := os.WriteFile(filepath.Join(dataDir, markerFile), []byte(foreign+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		// No backups: the foreign data is moved aside and the member starts empty.
		h.initialize(0, CaseNonQuorateFirstRestore)
		owners = append(owners, foreign)
	}
	aside := siblings(t, dataDir)
	if len(aside) != 2 {
		t.Fatalf("moved-aside dirs %v, want one per move", aside)
	}
	if listed := MovedAside(dataDir); len(listed) != 2 || filepath.Base(listed[0]) != aside[0] || filepath.Base(listed[1]) != aside[1] {
		t.Fatalf("MovedAside (what the member lease reports) = %v, want %v", listed, aside)
	}
	var found []string
	for _, name := range aside {
		got, err := os.ReadFile(filepath.Join(filepath.Dir(dataDir), name, markerFile))
		if err != nil {
			t.Fatal(err)
		}
		found = append(found, strings.TrimSpace(string(got)))
		if _, err := os.Stat(dbPath(filepath.Join(filepath.Dir(dataDir), name))); err != nil {
			t.Fatalf("%s lost its database: %v", name, err)
		}
	}
	slices.Sort(found)
	if !slices.Equal(found, owners) {
		t.Fatalf("moved-aside dirs hold owners %v, want %v", found, owners)
	}
}

// Finding 1 for three members: an initialization of a running member decided "quorate, invalid data"
// (the database lock held by its own etcd) and removed the member from the cluster to re-add it as an
// empty learner. It must refuse and leave the membership alone.
func TestInitializeOfARunningMemberLeavesTheClusterAlone(t *testing.T) {
	h := newHarness(t, 3)
	h.bootstrap()
	putN(t, h.client(), "k/", 50)
	before := memberIDs(t, h)
	err := h.initializer(1, nil).Initialize(t.Context(), podwire.InitFull)
	if !errors.Is(err, ErrDataDirInUse) {
		t.Fatalf("initialization of a running member: %v, want %v", err, ErrDataDirInUse)
	}
	if after := memberIDs(t, h); !slices.Equal(before, after) {
		t.Fatalf("members changed from %x to %x", before, after)
	}
	if got := siblings(t, h.nodes[1].dataDir); len(got) > 0 {
		t.Fatalf("data moved beside the data dir: %v", got)
	}
	if n := countKeys(t, h.nodes[1].etcd.Client(t)); n != 50 {
		t.Fatalf("member 1 serves %d keys, want 50", n)
	}
}
