package restorer_test

import (
	"io"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	etcdutlsnapshot "go.etcd.io/etcd/etcdutl/v3/snapshot"
	"go.uber.org/zap"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshotformat"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

// baselineRestore is the upstream sidecar's way: restore the full snapshot with etcdutl, start an
// embedded etcd on it and replay every delta revision as one transaction through the client.
func baselineRestore(t *testing.T, store snapstore.SnapStore, dataDir, peer string) benchResult {
	ctx := t.Context()
	snaps, err := store.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stream, err := snapshot.LatestStream(snaps)
	if err != nil {
		t.Fatal(err)
	}
	dbPath := filepath.Join(t.TempDir(), "snapshot.db")
	raw, err := store.Fetch(ctx, stream.Full)
	if err != nil {
		t.Fatal(err)
	}
	full, err := snapshotformat.OpenFull(raw, stream.Full, true)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(f, full); err != nil {
		t.Fatal(err)
	}
	_, _ = f.Close(), raw.Close()
	err = etcdutlsnapshot.NewV3(zap.NewNop()).Restore(etcdutlsnapshot.RestoreConfig{SnapshotPath: dbPath, Name: "m0",
		OutputDataDir: dataDir, PeerURLs: []string{peer}, InitialCluster: "m0=" + peer, InitialClusterToken: "bench"})
	if err != nil {
		t.Fatal(err)
	}
	peerURL, _ := url.Parse(peer)
	m := etcdserver.StartMember(t, etcdserver.MemberConfig{Name: "m0", DataDir: dataDir, PeerURL: *peerURL, InitialCluster: "m0=" + peer})
	cli := m.Client(t)
	applied := stream.Full.LastRevision
	base := applied
	for _, d := range stream.Deltas {
		raw, err := store.Fetch(ctx, d)
		if err != nil {
			t.Fatal(err)
		}
		delta, err := snapshotformat.OpenDelta(raw, d, 0)
		_ = raw.Close()
		if err != nil {
			t.Fatal(err)
		}
		var ops []clientv3.Op
		var rev int64
		commit := func() {
			if len(ops) == 0 {
				return
			}
			if _, err := cli.Txn(ctx).Then(ops...).Commit(); err != nil {
				t.Fatalf("replaying revision %d: %v", rev, err)
			}
			applied, ops = rev, ops[:0]
		}
		for ev, err := range delta.Events() {
			if err != nil {
				t.Fatal(err)
			}
			r := ev.EtcdEvent.Kv.ModRevision
			if r <= applied {
				continue
			}
			if r != rev {
				commit()
				rev = r
			}
			if ev.EtcdEvent.Type == mvccpb.DELETE {
				ops = append(ops, clientv3.OpDelete(string(ev.EtcdEvent.Kv.Key)))
			} else {
				ops = append(ops, clientv3.OpPut(string(ev.EtcdEvent.Kv.Key), string(ev.EtcdEvent.Kv.Value)))
			}
		}
		commit()
	}
	resp, err := cli.Get(ctx, "probe")
	if err != nil {
		t.Fatal(err)
	}
	return benchResult{Revisions: applied - base, Final: resp.Header.Revision}
}
