package restorer_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/restorer"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshotformat"
	"github.com/gardener-etcd/gardener-etcd/test/support/backuptest"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

// TestOverlappingDeltasOfALeaderChange writes what an old and a new backup leader upload around a
// leader change — a duplicate, a delta covered by a longer one and partly overlapping deltas — and
// restores exactly the source.
func TestOverlappingDeltasOfALeaderChange(t *testing.T) {
	ctx := t.Context()
	store := backuptest.Local(t)
	src := etcdserver.Start(t).Client(t)
	s := newSnapshotter(t, src, store, logr.Discard()) // full snapshot of the empty store
	s.Stop()
	full := s.LastRevision()
	for i := range 40 {
		if _, err := src.Put(ctx, fmt.Sprintf("k%d", i%7), fmt.Sprintf("v%d", i)); err != nil {
			t.Fatal(err)
		}
		if i%9 == 0 {
			if _, err := src.Delete(ctx, fmt.Sprintf("k%d", (i+3)%7)); err != nil {
				t.Fatal(err)
			}
		}
	}
	last := backuptest.StateAt(t, src, 0).Revision
	events := watchAll(t, src, full+1, last)
	save := func(from, to int64, created int64) {
		t.Helper()
		var buf bytes.Buffer
		enc := snapshotformat.NewDeltaEncoder(&buf)
		for _, ev := range events {
			if r := ev.Kv.ModRevision; r >= from && r <= to {
				if err := enc.Encode(ev, time.Now()); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := enc.Close(); err != nil {
			t.Fatal(err)
		}
		if err := store.Save(ctx, snapshot.NewIncr(from, to, time.Unix(created, 0), snapshot.CompressionNone), &buf); err != nil {
			t.Fatal(err)
		}
	}
	mid := full + (last-full)/2
	save(full+1, mid, 100)    // old leader
	save(full+1, mid, 101)    // the same revisions uploaded again
	save(full+1, full+3, 102) // covered by the first
	save(mid-4, mid+5, 103)   // new leader started a few revisions back: partly overlapping
	save(mid+2, last, 104)    // and again
	dataDir := filepath.Join(t.TempDir(), "m0")
	opts := restoreOptions(store, dataDir, t)
	res, err := restorer.Restore(ctx, opts)
	if err != nil {
		t.Fatalf("Restore: %v", err)
	}
	if res.Revision != last || res.SkippedEvents == 0 {
		t.Fatalf("result %+v: want revision %d with skipped overlapping events", res, last)
	}
	peer := opts.InitialAdvertisePeerURLs[0]
	m := etcdserver.StartMember(t, etcdserver.MemberConfig{Name: "m0", DataDir: dataDir, PeerURL: mustURL(t, peer), InitialCluster: opts.InitialCluster})
	if diff := backuptest.Diff(backuptest.StateAt(t, src, last), backuptest.StateAt(t, m.Client(t), 0)); len(diff) > 0 {
		t.Fatalf("restored differs:\n%s", strings.Join(diff, "\n"))
	}
}

func watchAll(t *testing.T, cli *clientv3.Client, from, to int64) []*mvccpb.Event {
	t.Helper()
	var out []*mvccpb.Event
	for resp := range cli.Watch(t.Context(), "", clientv3.WithPrefix(), clientv3.WithRev(from)) {
		if err := resp.Err(); err != nil {
			t.Fatal(err)
		}
		for _, ev := range resp.Events {
			out = append(out, (*mvccpb.Event)(ev))
		}
		if len(out) > 0 && out[len(out)-1].Kv.ModRevision >= to {
			return out
		}
	}
	t.Fatal("watch ended early")
	return nil
}
