package initializer

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
	"github.com/gardener-etcd/gardener-etcd/test/support/backuptest"
)

// A single-member cluster has no peer to ask: data behind the latest backup is replaced by a restore,
// current data is reused, and data owned by another Etcd is never served.
func TestSingleMemberRevisionCheckAndOwnerGuard(t *testing.T) {
	h := newHarness(t, 1)
	store := backuptest.Local(t)
	h.store = store.SnapStore
	h.initialize(0, CaseBootstrapFirst)
	h.start(0)
	cli := h.nodes[0].etcd.Client(t)
	s := startSnapshotter(t, cli, store)
	putN(t, cli, "old/", 20)
	takeDelta(t, s)

	// Keep a copy of the data at this point, then move on and back up more.
	h.stop(0)
	stale := filepath.Join(t.TempDir(), "stale")
	if out, err := exec.Command("cp", "-a", h.nodes[0].dataDir, stale).CombinedOutput(); err != nil {
		t.Fatalf("copy: %v %s", err, out)
	}
	h.initialize(0, CaseRestartValid) // data equals the backup
	h.start(0)
	cli = h.nodes[0].etcd.Client(t)
	s.Stop()
	s = startSnapshotter(t, cli, store)
	last := putN(t, cli, "new/", 20)
	takeDelta(t, s)
	s.Stop()
	want := backuptest.StateAt(t, cli, last)
	h.stop(0)

	// The stale copy comes back (e.g. an old volume snapshot): it is behind the store.
	if err := os.RemoveAll(h.nodes[0].dataDir); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(stale, h.nodes[0].dataDir); err != nil {
		t.Fatal(err)
	}
	h.initialize(0, CaseNonQuorateFirstRestore)
	h.start(0)
	if d := backuptest.Diff(want, backuptest.StateAt(t, h.nodes[0].etcd.Client(t), last)); len(d) > 0 {
		t.Fatalf("restored data differs: %v", d[:min(5, len(d))])
	}

	// Sanity mode after a graceful exit reuses the data without further checks.
	h.stop(0)
	in := h.initializer(0, nil)
	if err := in.Initialize(t.Context(), podwire.InitSanity); err != nil || in.State().Case != CaseRestartValid {
		t.Fatalf("sanity: %v, %s", err, in.State().Case)
	}

	// Valid data written for another Etcd is not used: it is moved aside and restored over.
	if err := os.WriteFile(filepath.Join(h.nodes[0].dataDir, markerFile), []byte("other/etcd-main\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := in.Initialize(t.Context(), podwire.InitSanity); err != nil || in.State().Case != CaseNonQuorateFirstRestore {
		t.Fatalf("foreign owner: %v, %s", err, in.State().Case)
	}
	aside := MovedAside(h.nodes[0].dataDir)
	if len(aside) != 2 {
		t.Fatalf("moved-aside dirs %v, want the stale copy and the foreign data", aside)
	}
	if got, _ := os.ReadFile(filepath.Join(aside[1], markerFile)); string(got) != "other/etcd-main\n" {
		t.Fatalf("foreign data not kept aside: marker %q", got)
	}
	h.nodes[0].lastInitalized = in.State()
	h.start(0)
	if d := backuptest.Diff(want, backuptest.StateAt(t, h.nodes[0].etcd.Client(t), last)); len(d) > 0 {
		t.Fatalf("restored data differs: %v", d[:min(5, len(d))])
	}
}
