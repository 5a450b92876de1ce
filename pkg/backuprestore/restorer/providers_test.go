package restorer_test

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/restorer"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/test/support/backuptest"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

// upstreamKey is an object key of the upstream sidecar's layout with gzip compression, below the tests'
// prefix: <prefix>/v2/Full-00000000-<rev %08d>-<unix>.gz or <prefix>/v2/Incr-<start>-<last>-<unix>.gz.
var upstreamKey = regexp.MustCompile(`^` + backuptest.Prefix + `/v2/(Full-00000000|Incr-[0-9]{8,})-[0-9]{8,}-[0-9]{10}\.gz$`)

// TestRestoreUpstreamLayoutFromEveryProvider backs a real etcd up with the real snapshotter (a full
// snapshot and three gzip deltas of puts, overwrites, deletes, transactions and leased keys) to a store of
// every provider, checks the objects are named as the upstream sidecar names them, and restores them:
// the restored etcd must hold every key with all its revision fields.
func TestRestoreUpstreamLayoutFromEveryProvider(t *testing.T) {
	backuptest.ForEach(t, backuptest.AllProviders, func(t *testing.T, store *backuptest.Store) {
		src := etcdserver.Start(t).Client(t)
		backuptest.Churn(t, src, 0)
		s := backuptest.Backup(t, src, store.SnapStore, nil, snapshot.CompressionGzip) // takes the full snapshot
		var last int64
		for round := 1; round <= 3; round++ {
			backuptest.Churn(t, src, round)
			last = backuptest.TakeDelta(t, s).LastRevision
		}
		want := backuptest.StateAt(t, src, last)

		snaps, err := store.List(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		var fulls, deltas int
		for _, snap := range snaps {
			if key := snap.Key(backuptest.Prefix); !upstreamKey.MatchString(key) {
				t.Fatalf("object %s is not named as the upstream sidecar names gzip snapshots", key)
			}
			if snap.Kind == snapshot.KindFull {
				fulls++
			} else {
				deltas++
			}
		}
		if fulls != 1 || deltas != 3 {
			t.Fatalf("store holds %d full snapshots and %d deltas (%v), want 1 and 3", fulls, deltas, snaps)
		}

		dataDir := filepath.Join(t.TempDir(), "m0")
		opts := restoreOptions(store, dataDir, t)
		res, err := restorer.Restore(t.Context(), opts)
		if err != nil {
			t.Fatalf("Restore from %s: %v", store.Name, err)
		}
		if res.Revision != last || len(res.Deltas) != 3 {
			t.Fatalf("result %+v, want revision %d from 3 deltas", res, last)
		}
		m := etcdserver.StartMember(t, etcdserver.MemberConfig{Name: "m0", DataDir: dataDir,
			PeerURL: mustURL(t, opts.InitialAdvertisePeerURLs[0]), InitialCluster: opts.InitialCluster})
		if diff := backuptest.Diff(want, backuptest.StateAt(t, m.Client(t), 0)); len(diff) > 0 {
			t.Fatalf("etcd restored from %s differs from the source at revision %d:\n%s", store.Name, last, strings.Join(diff, "\n"))
		}
	})
}
