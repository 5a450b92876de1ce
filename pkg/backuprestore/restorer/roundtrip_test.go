package restorer_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/restorer"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshotter"
	"github.com/gardener-etcd/gardener-etcd/test/support/backuptest"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

// newSnapshotter starts a snapshotter whose deltas are cut on demand only (the period is long).
func newSnapshotter(t *testing.T, cli *clientv3.Client, store *backuptest.Store, log logr.Logger) *snapshotter.Snapshotter {
	t.Helper()
	cfg := snapshotter.Default()
	cfg.Schedule, cfg.DeltaSnapshotPeriod, cfg.GarbageCollectionPeriod = "", time.Hour, 0
	s, err := snapshotter.New(snapshotter.Options{Config: cfg, Client: cli, Store: store.SnapStore, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

func takeDelta(t *testing.T, s *snapshotter.Snapshotter) *snapshot.Snapshot {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	d, err := s.TakeDelta(ctx)
	if err != nil || d == nil {
		t.Fatalf("TakeDelta = %v, %v; want a delta", d, err)
	}
	return d
}

// eventually polls cond until it holds or the timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func keyGone(t *testing.T, cli *clientv3.Client, key string) func() bool {
	return func() bool {
		resp, err := cli.Get(t.Context(), key)
		return err == nil && len(resp.Kvs) == 0
	}
}

// backupWorkload writes puts, overwrites, deletes, a transaction and lease-attached keys across a full
// snapshot and three deltas. A short lease granted before the full snapshot is kept alive until the
// last delta and left to expire in the source afterwards; a lease granted after the full snapshot is
// in no snapshot at all. It returns the revision of the last delta.
func backupWorkload(t *testing.T, cli *clientv3.Client, s *snapshotter.Snapshotter, shortLease clientv3.LeaseID) int64 {
	t.Helper()
	ctx := t.Context()
	put := func(k, v string, opts ...clientv3.OpOption) {
		t.Helper()
		if _, err := cli.Put(ctx, k, v, opts...); err != nil {
			t.Fatal(err)
		}
	}
	// delta 1: overwrites, deletes, binary values, a transaction
	for i := range 30 {
		put(fmt.Sprintf("/registry/pods/p%02d", i%10), strings.Repeat("v", i))
	}
	put("/registry/bin", "\x00\xff\n\"")
	if _, err := cli.Delete(ctx, "/registry/pods/p03"); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Txn(ctx).Then(clientv3.OpPut("/registry/t1", "a"), clientv3.OpPut("/registry/t2", "b"), clientv3.OpDelete("/registry/pods/p04")).Commit(); err != nil {
		t.Fatal(err)
	}
	put("/registry/short/two", "s2", clientv3.WithLease(shortLease))
	takeDelta(t, s)

	// delta 2: a lease that expires in the source (its keys' deletions are in the delta), a lease
	// granted after the full snapshot, a prefix delete
	expiring, err := cli.Grant(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	put("/registry/expired/a", "x", clientv3.WithLease(expiring.ID))
	put("/registry/expired/b", "y", clientv3.WithLease(expiring.ID))
	eventually(t, 20*time.Second, "the source to expire a 2s lease", keyGone(t, cli, "/registry/expired/a"))
	late, err := cli.Grant(ctx, 3600)
	if err != nil {
		t.Fatal(err)
	}
	put("/registry/late/lease", "l", clientv3.WithLease(late.ID))
	if _, err := cli.Delete(ctx, "/registry/pods/p0", clientv3.WithPrefix()); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.KeepAliveOnce(ctx, shortLease); err != nil {
		t.Fatalf("keeping the short lease alive: %v", err)
	}
	takeDelta(t, s)

	// delta 3: more overwrites of keys created in the full snapshot
	put("/registry/base/0", "changed")
	put("/registry/base/0", "changed again")
	if _, err := cli.KeepAliveOnce(ctx, shortLease); err != nil {
		t.Fatalf("keeping the short lease alive: %v", err)
	}
	return takeDelta(t, s).LastRevision
}

func TestBackupRestoreRoundTrip(t *testing.T) {
	for _, newStore := range backuptest.Kinds {
		store := newStore(t)
		t.Run(store.Name, func(t *testing.T) {
			ctx := t.Context()
			src := etcdserver.Start(t).Client(t)
			for i := range 5 {
				if _, err := src.Put(ctx, fmt.Sprintf("/registry/base/%d", i), "base"); err != nil {
					t.Fatal(err)
				}
			}
			short, err := src.Grant(ctx, 5)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := src.Put(ctx, "/registry/short/one", "s1", clientv3.WithLease(short.ID)); err != nil {
				t.Fatal(err)
			}
			s := newSnapshotter(t, src, store, testr.New(t)) // takes the initial full snapshot
			last := backupWorkload(t, src, s, short.ID)
			want := backuptest.StateAt(t, src, last)
			// The short lease now expires in the source, before and during the restore.
			eventually(t, 30*time.Second, "the short lease to expire in the source", keyGone(t, src, "/registry/short/one"))

			dataDir := filepath.Join(t.TempDir(), "member0")
			peer := etcdserver.FreeURL(t)
			res, err := restorer.Restore(ctx, restorer.Options{
				Store: store, DataDir: dataDir, Name: "restored", ClusterToken: "tok",
				InitialCluster: "restored=" + peer.String(), InitialAdvertisePeerURLs: []string{peer.String()},
				MissingLeaseTTL: 3 * time.Second, Log: testr.New(t),
			})
			if err != nil {
				t.Fatalf("Restore: %v", err)
			}
			if res.Revision != last || len(res.Deltas) != 3 || res.MissingLeases != 2 {
				t.Fatalf("result = %+v, want revision %d from 3 deltas with 2 missing leases (the expired and the late one)", res, last)
			}
			m := etcdserver.StartMember(t, etcdserver.MemberConfig{Name: "restored", DataDir: dataDir, PeerURL: peer,
				InitialCluster: "restored=" + peer.String()})
			restored := m.Client(t)
			if diff := backuptest.Diff(want, backuptest.StateAt(t, restored, 0)); len(diff) > 0 {
				t.Fatalf("restored etcd differs from the source at revision %d:\n%s", last, strings.Join(diff, "\n"))
			}
			// The leases work in the restored cluster: the short one (from the full snapshot) and the one
			// created for the late lease's key expire there, the long one from the source is still held.
			eventually(t, 30*time.Second, "the short lease to expire after the restore", keyGone(t, restored, "/registry/short/one"))
			eventually(t, 30*time.Second, "the recreated lease to expire after the restore", keyGone(t, restored, "/registry/late/lease"))
		})
	}
}
