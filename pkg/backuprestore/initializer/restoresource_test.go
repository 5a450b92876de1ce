package initializer

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/go-logr/logr"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
	"github.com/gardener-etcd/gardener-etcd/test/support/backuptest"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

// twoPrefixes are two stores in one container with the same credentials: the source cluster's backups
// and the new cluster's own prefix.
type twoPrefixes struct {
	name        string
	source, own snapstore.SnapStore
}

var locations = []func(t *testing.T) backuptest.Location{backuptest.LocalLocation, backuptest.S3Location}

func openTwoPrefixes(t *testing.T, location func(t *testing.T) backuptest.Location) twoPrefixes {
	loc := location(t)
	open := func(prefix string) snapstore.SnapStore {
		cfg := loc.Config
		cfg.Prefix = prefix
		s, err := snapstore.New(t.Context(), cfg, logr.Discard())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	return twoPrefixes{name: string(loc.Config.Provider), source: open("shoot--dev--old/etcd-main"), own: open("shoot--dev--new/etcd-main")}
}

// storeContents is every snapshot of a store with the SHA-256 of its stored bytes.
func storeContents(t *testing.T, s snapstore.SnapStore) []string {
	t.Helper()
	snaps, err := s.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, snap := range snaps {
		rc, err := s.Fetch(t.Context(), snap)
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		if _, err := io.Copy(h, rc); err != nil {
			t.Fatal(err)
		}
		_ = rc.Close()
		out = append(out, fmt.Sprintf("%s %x", snap.SnapName, h.Sum(nil)))
	}
	return out
}

// sourceHistory writes a history into the source cluster and backs it up (a full snapshot, then deltas),
// and returns a revision inside the last delta and the keyspace at it, read from the source etcd before
// its history is compacted away.
func sourceHistory(t *testing.T, source snapstore.SnapStore) (int64, backuptest.State) {
	t.Helper()
	src := etcdserver.Start(t)
	cli := src.Client(t)
	s := backuptest.Backup(t, cli, source, nil, snapshot.CompressionGzip)
	backuptest.Churn(t, cli, 0)
	backuptest.TakeFull(t, s, false)
	backuptest.Churn(t, cli, 1)
	backuptest.TakeDelta(t, s)
	from := backuptest.Churn(t, cli, 2) // the bad writes start after here
	last := backuptest.Churn(t, cli, 3)
	d := backuptest.TakeDelta(t, s)
	if d.StartRevision > from+1 || d.LastRevision != last {
		t.Fatalf("last delta spans %d..%d, want it to hold %d..%d", d.StartRevision, d.LastRevision, from+1, last)
	}
	target := from + 3 // inside the delta, not at its end
	want := backuptest.StateAt(t, cli, target)
	if _, err := cli.Compact(t.Context(), last); err != nil {
		t.Fatal(err)
	}
	s.Stop()
	src.Stop()
	return target, want
}

// A NEW three-member cluster whose first member restores from another cluster's backups up to a revision
// inside a delta: it holds exactly the source's keyspace at that revision (compared with what the
// source etcd served at it before compaction), at that revision, its own prefix starts with a full
// snapshot at it, the other members join it, and the source's snapshots are the same objects, byte for
// byte, afterwards.
func TestNewClusterRestoresFromTheSourceUpToARevision(t *testing.T) {
	for _, location := range locations {
		stores := openTwoPrefixes(t, location)
		t.Run(stores.name, func(t *testing.T) {
			target, want := sourceHistory(t, stores.source)
			before := storeContents(t, stores.source)

			h := newHarness(t, 3)
			h.store = stores.own
			withSource := func(o *Options) {
				o.RestoreSource = &RestoreSource{Store: snapstore.ReadOnly(stores.source), TargetRevision: target}
			}
			member1Joined := h.initializeWaiting(1, withSource)

			in0 := h.initializer(0, withSource)
			if err := in0.Initialize(t.Context(), podwire.InitFull); err != nil {
				t.Fatal(err)
			}
			if st := in0.State(); st.Case != CaseNonQuorateFirstRestore {
				t.Fatalf("member 0: case %s, want %s", st.Case, CaseNonQuorateFirstRestore)
			}
			h.nodes[0].lastInitalized = in0.State()
			own, err := stores.own.List(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if len(own) != 1 || own[0].Kind != snapshot.KindFull || own[0].LastRevision != target {
				t.Fatalf("own prefix holds %v, want one full snapshot at revision %d", own, target)
			}
			h.start(0)
			got := backuptest.StateAt(t, h.nodes[0].etcd.Client(t), 0)
			if got.Revision != target {
				t.Fatalf("restored cluster is at revision %d, want %d", got.Revision, target)
			}
			if d := backuptest.Diff(want, got); len(d) > 0 {
				t.Fatalf("restored keyspace differs from the source's at revision %d: %v", target, d[:min(5, len(d))])
			}
			if len(want.KVs) == 0 {
				t.Fatal("empty keyspace compared")
			}

			member1Joined()
			in2 := h.initializer(2, withSource)
			if err := in2.Initialize(t.Context(), podwire.InitFull); err != nil {
				t.Fatal(err)
			}
			h.nodes[2].lastInitalized = in2.State()
			h.start(2)
			h.promote(2)
			rev := putN(t, h.client(), "new/", 10)
			h.requireSameData(1, 0, rev)
			h.requireSameData(2, 0, rev)

			if after := storeContents(t, stores.source); !slices.Equal(before, after) {
				t.Fatalf("the source's snapshots changed:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
}

// countingStore counts List calls of the store it wraps.
type countingStore struct {
	snapstore.SnapStore
	lists int
}

func (c *countingStore) List(ctx context.Context) ([]*snapshot.Snapshot, error) {
	c.lists++
	return c.SnapStore.List(ctx)
}

// The source is for the initial bootstrap only: a member whose own prefix holds backups restores from
// them and never reads the source, and a member whose data directory holds a member does not fall back
// to the source even while its own prefix is empty.
func TestRestoreSourceIsReadOnlyForANewCluster(t *testing.T) {
	stores := openTwoPrefixes(t, backuptest.LocalLocation)
	target, _ := sourceHistory(t, stores.source)
	source := &countingStore{SnapStore: snapstore.ReadOnly(stores.source)}
	withSource := func(o *Options) { o.RestoreSource = &RestoreSource{Store: source, TargetRevision: target} }

	// A single member that ran before, with data of its own and no backups.
	h := newHarness(t, 1)
	h.initialize(0, CaseBootstrapFirst)
	h.start(0)
	last := putN(t, h.nodes[0].etcd.Client(t), "own/", 20)
	h.stop(0)
	h.store = stores.own
	in := h.initializer(0, withSource)
	if err := in.Initialize(t.Context(), podwire.InitFull); err != nil {
		t.Fatal(err)
	}
	if st := in.State(); st.Case != CaseRestartValid {
		t.Fatalf("case %s, want %s: the member's own data", st.Case, CaseRestartValid)
	}
	h.nodes[0].lastInitalized = in.State()
	h.start(0)
	if got := backuptest.StateAt(t, h.nodes[0].etcd.Client(t), 0); got.Revision != last {
		t.Fatalf("revision %d after the restart, want the member's own %d", got.Revision, last)
	}

	// Its own prefix gets a backup; the data is lost: the member restores its own backup.
	s := backuptest.Backup(t, h.nodes[0].etcd.Client(t), stores.own, nil, snapshot.CompressionGzip)
	s.Stop()
	h.stop(0)
	if err := os.RemoveAll(h.nodes[0].dataDir); err != nil {
		t.Fatal(err)
	}
	source.lists = 0
	in = h.initializer(0, withSource)
	if err := in.Initialize(t.Context(), podwire.InitFull); err != nil {
		t.Fatal(err)
	}
	if source.lists != 0 {
		t.Fatalf("the source was listed %d times though the own prefix holds backups", source.lists)
	}
	h.nodes[0].lastInitalized = in.State()
	h.start(0)
	if got := backuptest.StateAt(t, h.nodes[0].etcd.Client(t), 0); got.Revision != last {
		t.Fatalf("revision %d after restoring the own backup, want %d", got.Revision, last)
	}
}

// A source without backups fails the initialization instead of bootstrapping an empty cluster.
func TestEmptyRestoreSourceFailsTheInitialization(t *testing.T) {
	stores := openTwoPrefixes(t, backuptest.LocalLocation)
	h := newHarness(t, 1)
	h.store = stores.own
	in := h.initializer(0, func(o *Options) { o.RestoreSource = &RestoreSource{Store: snapstore.ReadOnly(stores.source)} })
	err := in.Initialize(t.Context(), podwire.InitFull)
	if err == nil || !strings.Contains(err.Error(), "the restore source holds no backups") {
		t.Fatalf("Initialize = %v, want the empty source named", err)
	}
	if entries, _ := os.ReadDir(h.nodes[0].dataDir); len(entries) > 0 {
		t.Fatalf("data directory written: %v", entries)
	}
}
