package compactor_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
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
				Leases: leases, Log: testr.New(t),
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

// TestCompactWritesLikeTheStream: the compacted snapshot is compressed like the newest snapshot it replaces
// and is final when the stream ends with a final full snapshot, as upstream etcd-backup-restore's compactor
// writes it; a final snapshot that deltas followed is not final any more. Each restores.
func TestCompactWritesLikeTheStream(t *testing.T) {
	for _, tc := range []struct {
		compression snapshot.Compression
		// finalThenDeltas: the stream is a final full snapshot followed by deltas; otherwise a full
		// snapshot, deltas and a final full snapshot at the end (final) or no final one.
		final, finalThenDeltas bool
		wantName               string // the suffix of the compacted snapshot's name
	}{
		{compression: snapshot.CompressionZlib, wantName: ".zlib"},
		{compression: snapshot.CompressionLZW, final: true, wantName: ".Z.final"},
		{compression: snapshot.CompressionGzip, finalThenDeltas: true, wantName: ".gz"},
		{compression: snapshot.CompressionNone, wantName: ""},
	} {
		t.Run(fmt.Sprintf("%s final=%t finalThenDeltas=%t", tc.compression, tc.final, tc.finalThenDeltas), func(t *testing.T) {
			store := backuptest.Local(t)
			cli := etcdserver.Start(t).Members[0].Client(t)
			s := backuptest.Backup(t, cli, store.SnapStore, backuptest.NewClock(time.Now().Add(-time.Hour).Truncate(time.Second)), tc.compression)
			if tc.finalThenDeltas {
				backuptest.TakeFull(t, s, true)
			}
			for round := range 2 {
				backuptest.Churn(t, cli, round)
				backuptest.TakeDelta(t, s)
			}
			if tc.final {
				backuptest.TakeFull(t, s, true)
			}
			s.Stop()
			want := backuptest.StateAt(t, cli, 0)

			res, err := compactor.Compact(t.Context(), compactor.Options{
				Store: store.SnapStore, DataDir: filepath.Join(t.TempDir(), "compaction.etcd"), Log: testr.New(t),
			})
			if err != nil {
				t.Fatal(err)
			}
			name := res.Snapshot.SnapName
			tail := name[strings.LastIndexByte(name, '-'):]
			if got := strings.TrimLeft(tail, "-0123456789"); got != tc.wantName {
				t.Fatalf("compacted snapshot %s ends in %q, want %q", name, got, tc.wantName)
			}

			dataDir := filepath.Join(t.TempDir(), "restored")
			peer := etcdserver.FreeURL(t)
			if _, err := restorer.Restore(t.Context(), restorer.Options{Store: store.SnapStore, DataDir: dataDir, Name: "m0",
				InitialCluster: "m0=" + peer.String(), InitialAdvertisePeerURLs: []string{peer.String()}, ClusterToken: "t", Log: testr.New(t)}); err != nil {
				t.Fatal(err)
			}
			m := etcdserver.StartMember(t, etcdserver.MemberConfig{Name: "m0", DataDir: dataDir, PeerURL: peer})
			if diff := backuptest.Diff(want, backuptest.StateAt(t, m.Client(t), 0)); len(diff) > 0 {
				t.Fatalf("restore of the compacted snapshot differs from the source:\n%v", diff)
			}
		})
	}
}
