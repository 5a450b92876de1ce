package initializer

import (
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gardener-etcd/gardener-etcd/pkg/etcddata"
	"github.com/gardener-etcd/gardener-etcd/test/support/backuptest"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

// A single member killed with SIGKILL leaves a crash image whose bbolt database
// lags its WAL (etcd commits the backend in batches; the WAL is what acknowledged writes are fsynced
// to). etcd started on that image replays the WAL and serves every acknowledged write, so the revision
// the member holds is the WAL's, not the database's: the initializer must not restore an older backup
// over it.
func TestCrashImageAheadOfTheBackupIsNotRestoredOver(t *testing.T) {
	h := newHarness(t, 1)
	store := backuptest.Local(t)
	h.store = store.SnapStore
	h.initialize(0, CaseBootstrapFirst)
	nd := h.nodes[0]
	// A backend batch interval of an hour: nothing but a snapshot commits the database before the kill.
	proc := etcdserver.StartProcess(t, etcdserver.ProcessConfig{
		Name: nd.name, DataDir: nd.dataDir, ClientURL: nd.client.String(), PeerURL: nd.peer.String(),
		InitialCluster: h.initial.String(), BackendBatchInterval: time.Hour, BackendBatchLimit: 1 << 30,
	})
	cli := etcdserver.NewClient(t, proc.Endpoint())
	s := startSnapshotter(t, cli, store) // the first full snapshot (at the empty start) commits the database
	putN(t, cli, "backed-up/", 20)
	backup := takeDelta(t, s) // a delta comes from a watch: it does not commit the database
	s.Stop()
	last := putN(t, cli, "wal-only/", 20)
	want := backuptest.StateAt(t, cli, last)
	proc.Kill()

	if rev, err := etcddata.DBRevision(dbPath(nd.dataDir)); err != nil || rev >= backup.LastRevision {
		t.Fatalf("precondition: the crash image's database should lag the backup (revision %d, %v; backup %d)", rev, err, backup.LastRevision)
	}
	start := time.Now()
	h.initialize(0, CaseRestartValid)
	withReplay := time.Since(start)
	h.start(0)
	resp, err := nd.etcd.Client(t).Get(t.Context(), "", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Count != 40 || resp.Header.Revision != last {
		t.Fatalf("member serves %d keys at revision %d, want the 40 written before the kill at %d", resp.Count, resp.Header.Revision, last)
	}
	if d := backuptest.Diff(want, backuptest.StateAt(t, nd.etcd.Client(t), last)); len(d) > 0 {
		t.Fatalf("after initialization the member serves other data: %v", d[:min(5, len(d))])
	}

	// After a graceful stop the database holds everything: no replay is needed (same-run baseline).
	h.stop(0)
	if d := InspectDataDir(nd.dataDir, testOwner, true); d.WALAhead || d.Revision != last {
		t.Fatalf("after a graceful stop: WAL ahead %v, database revision %d, want %d", d.WALAhead, d.Revision, last)
	}
	start = time.Now()
	h.initialize(0, CaseRestartValid)
	t.Logf("full initialization of the crash image (WAL replayed on a copy): %s; of the same data after a graceful stop: %s (ratio %.1f)",
		withReplay, time.Since(start), float64(withReplay)/float64(time.Since(start)))
}
