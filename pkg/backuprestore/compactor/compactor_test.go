package compactor_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/compactor"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/restorer"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/test/support/backuptest"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

// leaseSpy records the revision the compactor renews the leases with.
type leaseSpy struct {
	kinds []snapshot.Kind
	revs  []int64
}

func (l *leaseSpy) Update(_ context.Context, kind snapshot.Kind, rev int64, _ string) error {
	l.kinds, l.revs = append(l.kinds, kind), append(l.revs, rev)
	return nil
}

// TestCompactReplacesDeltasByOneFull backs up a varied history as a full snapshot plus deltas, compacts,
// and checks that the latest snap stream is now a single newer full snapshot at the last delta's
// revision whose restore holds every key with every revision field of the source.
func TestCompactReplacesDeltasByOneFull(t *testing.T) {
	for _, kind := range backuptest.Kinds {
		store := kind(t)
		t.Run(store.Name, func(t *testing.T) {
			src := etcdserver.Start(t).Members[0]
			cli := src.Client(t)
			clock := backuptest.NewClock(time.Now().Add(-time.Hour).Truncate(time.Second))
			s := backuptest.Backup(t, cli, store.SnapStore, clock, snapshot.CompressionGzip)
			var last int64
			for round := range 4 {
				last = backuptest.Churn(t, cli, round)
				backuptest.TakeDelta(t, s)
			}
			s.Stop()
			want := backuptest.StateAt(t, cli, 0)
			if want.Revision != last {
				t.Fatalf("source moved: revision %d, last write %d", want.Revision, last)
			}

			leases := &leaseSpy{}
			res, err := compactor.Compact(t.Context(), compactor.Options{
				Store: store.SnapStore, DataDir: filepath.Join(t.TempDir(), "compaction.etcd"),
				Compression: snapshot.CompressionGzip, Leases: leases, Log: testr.New(t),
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Restore.Deltas) != 4 || res.Snapshot.LastRevision != last || res.Snapshot.Kind != snapshot.KindFull {
				t.Fatalf("compacted %d deltas into %s; want 4 deltas into a full snapshot at %d", len(res.Restore.Deltas), res.Snapshot, last)
			}
			if res.Snapshot.CompressionSuffix != ".gz" || res.Snapshot.IsFinal {
				t.Errorf("new snapshot %s: want gzip, not final", res.Snapshot.SnapName)
			}
			if len(leases.revs) != 1 || leases.kinds[0] != snapshot.KindFull || leases.revs[0] != last {
				t.Errorf("lease renewals %v %v, want one full renewal with %d", leases.kinds, leases.revs, last)
			}

			snaps, err := store.List(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			stream, err := snapshot.LatestStream(snaps)
			if err != nil {
				t.Fatal(err)
			}
			if stream.Full.SnapName != res.Snapshot.SnapName || len(stream.Deltas) != 0 {
				t.Fatalf("latest stream after compaction: %s + %d deltas, want %s alone", stream.Full, len(stream.Deltas), res.Snapshot.SnapName)
			}

			dataDir := filepath.Join(t.TempDir(), "restored")
			peer := etcdserver.FreeURL(t)
			restored, err := restorer.Restore(t.Context(), restorer.Options{Store: store.SnapStore, DataDir: dataDir, Name: "m0",
				InitialCluster: "m0=" + peer.String(), InitialAdvertisePeerURLs: []string{peer.String()}, ClusterToken: "t", Log: testr.New(t)})
			if err != nil {
				t.Fatal(err)
			}
			if restored.AppliedRevisions != 0 {
				t.Errorf("restore after compaction replayed %d revisions, want none", restored.AppliedRevisions)
			}
			m := etcdserver.StartMember(t, etcdserver.MemberConfig{Name: "m0", DataDir: dataDir, PeerURL: peer})
			got := backuptest.StateAt(t, m.Client(t), 0)
			if diff := backuptest.Diff(want, got); len(diff) > 0 {
				t.Fatalf("restore of the compacted snapshot differs from the source:\n%v", diff)
			}
		})
	}
}
