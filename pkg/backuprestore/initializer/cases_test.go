package initializer

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
	"github.com/gardener-etcd/gardener-etcd/test/support/backuptest"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

// requireSameData compares node i's keyspace at rev with node 0's, read from each member alone.
func (h *harness) requireSameData(i, ref int, rev int64) {
	h.t.Helper()
	want := backuptest.StateAt(h.t, h.nodes[ref].etcd.Client(h.t), rev)
	got := backuptest.StateAt(h.t, h.nodes[i].etcd.Client(h.t), rev)
	if d := backuptest.Diff(want, got); len(d) > 0 {
		h.t.Fatalf("%s differs from %s at revision %d: %v", h.nodes[i].name, h.nodes[ref].name, rev, d[:min(5, len(d))])
	}
	if len(want.KVs) == 0 {
		h.t.Fatal("empty keyspace compared")
	}
}

func memberIDs(t *testing.T, h *harness) []uint64 {
	resp, err := h.client().MemberList(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var ids []uint64
	for _, m := range resp.Members {
		ids = append(ids, m.GetID())
	}
	return ids
}

// Cases 1, 2, 3 and 6 on one cluster: a fresh bootstrap, a restart with valid data while the cluster
// is quorate, and a restart of a member needed for quorum.
func TestBootstrapRestartAndNonQuorateRestart(t *testing.T) {
	h := newHarness(t, 3)
	h.bootstrap() // cases 1 and 2
	for _, nd := range h.nodes {
		if got, _ := os.ReadFile(filepath.Join(nd.dataDir, markerFile)); strings.TrimSpace(string(got)) != testOwner {
			t.Fatalf("%s: owner marker %q", nd.name, got)
		}
	}
	rev := putN(t, h.client(), "a/", 50)

	// Case 3: member 1 restarts while 0 and 2 keep quorum.
	h.stop(1)
	id1 := uint64(h.nodes[1].etcd.Etcd.Server.MemberID())
	h.initialize(1, CaseRestartValid)
	h.start(1)
	if got := uint64(h.nodes[1].etcd.Etcd.Server.MemberID()); got != id1 {
		t.Fatalf("member 1 restarted with ID %x, want its old %x", got, id1)
	}
	h.requireSameData(1, 0, rev)

	// Case 6: members 1 and 2 are down, 0 alone answers without quorum; 2's valid data is reused.
	h.stop(1, 2)
	h.initialize(2, CaseNonQuorateValid)
	h.initialize(1, CaseNonQuorateValid)
	h.start(1, 2)
	rev = putN(t, h.client(), "b/", 10)
	h.requireSameData(2, 0, rev)
	if ids := memberIDs(t, h); len(ids) != 3 {
		t.Fatalf("members after the restarts: %v", ids)
	}
}

// Case 5: a member of a 3-member cluster whose data dir is wiped is removed, re-added as a learner,
// started with state existing, promoted, and ends with the same data.
func TestWipedMemberRejoinsAsLearner(t *testing.T) {
	h := newHarness(t, 3)
	h.bootstrap()
	putN(t, h.client(), "k/", 200)
	old := uint64(h.nodes[2].etcd.Etcd.Server.MemberID())
	h.stop(2)
	if err := os.RemoveAll(h.nodes[2].dataDir); err != nil {
		t.Fatal(err)
	}

	st := h.initialize(2, CaseQuorateInvalidMetadata)
	if st.ClusterState != "existing" || len(st.JoinMembers) != 3 {
		t.Fatalf("state %+v, want existing with 3 members", st)
	}
	if ids := memberIDs(t, h); slices.Contains(ids, old) || len(ids) != 3 {
		t.Fatalf("members %x still hold the old ID %x or miss the learner", ids, old)
	}
	h.start(2)
	h.promote(2)
	rev := putN(t, h.client(), "after/", 20)
	h.requireSameData(2, 0, rev)
}

// Case 4: valid WAL metadata but a database that does not open: the old identity is removed, the data
// moved aside (kept for inspection), the member rejoins as a learner.
func TestCorruptDatabaseRejoinsAsLearner(t *testing.T) {
	h := newHarness(t, 3)
	h.bootstrap()
	putN(t, h.client(), "k/", 100)
	old := uint64(h.nodes[1].etcd.Etcd.Server.MemberID())
	h.stop(1)
	if err := os.Truncate(dbPath(h.nodes[1].dataDir), 100); err != nil {
		t.Fatal(err)
	}

	h.initialize(1, CaseQuorateInvalidData)
	aside := MovedAside(h.nodes[1].dataDir)
	if len(aside) != 1 {
		t.Fatalf("moved-aside dirs %v, want one", aside)
	}
	if _, err := os.Stat(walDir(aside[0])); err != nil {
		t.Fatalf("the bad data dir was not kept aside: %v", err)
	}
	if ids := memberIDs(t, h); slices.Contains(ids, old) {
		t.Fatalf("old member ID %x still in %x", old, ids)
	}
	h.start(1)
	h.promote(1)
	rev := putN(t, h.client(), "after/", 20)
	h.requireSameData(1, 0, rev)
}

// A member without data must never bootstrap next to a running, non-quorate cluster: with backups in
// the store, the first member waits instead of restoring a cluster of its own; without any, it waits
// too because the answering peer has data.
func TestMemberWithoutDataNeverBootstrapsBesideANonQuorateCluster(t *testing.T) {
	for _, withBackup := range []bool{true, false} {
		t.Run(map[bool]string{true: "backups", false: "no backups"}[withBackup], func(t *testing.T) {
			h := newHarness(t, 3)
			h.bootstrap()
			if withBackup {
				h.store = backuptest.Local(t).SnapStore
				if err := h.initializer(0, nil).opts.TakeFullSnapshot(t.Context(), h.nodes[1].etcd.Client(t)); err != nil {
					t.Fatal(err)
				}
			}
			putN(t, h.client(), "k/", 10)
			h.stop(0, 2)
			if err := os.RemoveAll(h.nodes[0].dataDir); err != nil {
				t.Fatal(err)
			}
			in := h.initializer(0, func(o *Options) { o.QuorumWait = 2 * time.Second })
			f, err := in.Observe(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if c := Decide(f); c != CaseNonQuorateFollowingWait {
				t.Fatalf("decided %s with facts %+v", c, f)
			}
			if err := in.Initialize(t.Context(), podwire.InitFull); err == nil {
				t.Fatal("initialization succeeded without a quorate cluster to join")
			}
			if !dataDirEmpty(h.nodes[0].dataDir) {
				t.Fatal("the data dir was populated while waiting")
			}
		})
	}
}

// The first member lost its data and is cut off from the other two, which serve on as a quorate cluster
// and renew their leases; the store holds their backups. Nobody answers it, yet it must not restore a
// cluster of its own: that would be a second cluster beside the first, and writes acknowledged by either
// would be missing from the other. It waits, and joins the cluster once it reaches it again.
func TestCutOffFirstMemberNeverRestoresBesideALiveCluster(t *testing.T) {
	h := newHarness(t, 3)
	h.bootstrap()
	h.store = backuptest.Local(t).SnapStore
	if err := h.initializer(0, nil).opts.TakeFullSnapshot(t.Context(), h.nodes[1].etcd.Client(t)); err != nil {
		t.Fatal(err)
	}
	rev := putN(t, h.client(), "k/", 10)
	h.stop(0)
	if err := os.RemoveAll(h.nodes[0].dataDir); err != nil {
		t.Fatal(err)
	}
	running := func(context.Context, []string) ([]string, error) { // what the others' lease renewals show
		var live []string
		for _, nd := range h.nodes[1:] {
			if nd.etcd != nil && !nd.etcd.Stopped() {
				live = append(live, nd.name)
			}
		}
		return live, nil
	}
	unreachable := etcdserver.FreeURL(t) // nothing listens: the cut
	cutOff := h.initializer(0, func(o *Options) {
		o.ClusterEndpoints, o.LivePeers, o.QuorumWait = []string{unreachable.String()}, running, 2*time.Second
	})
	f, err := cutOff.Observe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if c := Decide(f); c != CaseNonQuorateFollowingWait {
		t.Fatalf("decided %s (live peers %v) instead of waiting to join", c, f.Cluster.LivePeers)
	}
	if err := cutOff.Initialize(t.Context(), podwire.InitFull); err == nil {
		t.Fatal("initialization succeeded while cut off from the cluster")
	}
	if !dataDirEmpty(h.nodes[0].dataDir) {
		t.Fatal("the data dir was populated while cut off: a cluster of its own")
	}

	// The cut heals: the member rejoins the one cluster and gets every write.
	rejoined := h.initializer(0, func(o *Options) { o.LivePeers = running })
	if err := rejoined.Initialize(t.Context(), podwire.InitFull); err != nil {
		t.Fatal(err)
	}
	h.nodes[0].lastInitalized = rejoined.State()
	h.start(0)
	h.promote(0)
	if ids := memberIDs(t, h); len(ids) != 3 {
		t.Fatalf("cluster has members %x, want three", ids)
	}
	eventually(t, time.Minute, "member 0 caught up", func() bool {
		resp, err := h.nodes[0].etcd.Client(t).Get(t.Context(), "k/", clientv3.WithPrefix(), clientv3.WithSerializable())
		return err == nil && resp.Header.Revision >= rev && resp.Count == 10
	})
}

// Cases 7 and 8: all three data dirs are lost, backups (full + deltas) are in the store. Member 1
// starts first and waits; member 0 restores everything up to the last delta, takes a new full snapshot
// and starts as a one-member cluster; member 1 then joins as a learner, member 2 too (case 5).
func TestTotalLossRestoresFromBackups(t *testing.T) {
	for _, kind := range backuptest.Kinds {
		store := kind(t)
		t.Run(store.Name, func(t *testing.T) {
			h := newHarness(t, 3)
			h.bootstrap()
			h.store = store.SnapStore
			// The snapshotter talks to one member, as the backup leader's sidecar does to its own etcd.
			cli := h.nodes[0].etcd.Client(t)
			s := startSnapshotter(t, cli, store)
			putN(t, cli, "full/", 50)
			if _, err := s.TakeFull(t.Context(), false); err != nil {
				t.Fatal(err)
			}
			putN(t, cli, "d1/", 50)
			takeDelta(t, s)
			if _, err := cli.Delete(t.Context(), "full/0001"); err != nil {
				t.Fatal(err)
			}
			last := putN(t, cli, "d2/", 50)
			if d := takeDelta(t, s); d.LastRevision != last {
				t.Fatalf("last delta ends at %d, want %d", d.LastRevision, last)
			}
			want := backuptest.StateAt(t, cli, last)
			s.Stop()
			h.stop(0, 1, 2)
			for _, nd := range h.nodes {
				if err := os.RemoveAll(nd.dataDir); err != nil {
					t.Fatal(err)
				}
			}

			// Member 1 comes first: it has nobody to join and may not restore alone.
			member1Joined := h.initializeWaiting(1, nil)

			h.initialize(0, CaseNonQuorateFirstRestore)
			snaps, err := store.List(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(snaps, func(s *snapshot.Snapshot) bool { return s.Kind == snapshot.KindFull && s.LastRevision == last }) {
				t.Fatalf("no full snapshot at revision %d after the restore in %d snapshots", last, len(snaps))
			}
			h.start(0)
			if ids := memberIDs(t, h); len(ids) != 1 {
				t.Fatalf("restored cluster has members %x, want one", ids)
			}
			if d := backuptest.Diff(want, backuptest.StateAt(t, h.nodes[0].etcd.Client(t), last)); len(d) > 0 {
				t.Fatalf("restored data differs: %v", d[:min(5, len(d))])
			}

			member1Joined()
			h.initialize(2, CaseQuorateInvalidMetadata)
			h.start(2)
			h.promote(2)
			rev := putN(t, h.client(), "new/", 10)
			h.requireSameData(1, 0, rev)
			h.requireSameData(2, 0, rev)
			if ids := memberIDs(t, h); len(ids) != 3 {
				t.Fatalf("members %x, want 3", ids)
			}
		})
	}
}

// etcdserverMember is a guard that the harness' nodes are test/support/etcdserver members.
var _ = etcdserver.MemberConfig{}
