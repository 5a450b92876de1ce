package sidecar

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/httpapi"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

// kv is what a restore must bring back of a key.
type kv struct {
	Value          string
	CreateRevision int64
	ModRevision    int64
	Version        int64
}

func allKeys(t *testing.T, cli *clientv3.Client) (map[string]kv, int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	resp, err := cli.Get(ctx, "", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]kv{}
	for _, k := range resp.Kvs {
		out[string(k.Key)] = kv{Value: string(k.Value), CreateRevision: k.CreateRevision, ModRevision: k.ModRevision, Version: k.Version}
	}
	return out, resp.Header.Revision
}

func put(t *testing.T, cli *clientv3.Client, prefix string, n int) int64 {
	t.Helper()
	var rev int64
	for i := range n {
		resp, err := cli.Put(t.Context(), prefix+strconv.Itoa(i), prefix+" value "+strconv.Itoa(i))
		if err != nil {
			t.Fatal(err)
		}
		rev = resp.Header.Revision
	}
	return rev
}

// TestSingleMemberBacksUpAndRestoresAfterDataLoss runs one pod of a single-member Etcd with a Local
// store: the decision-table initializer bootstraps it, the sidecar (backup leader of its own member)
// takes a full snapshot on start and deltas every period, renews both snapshot leases, and serves the
// snapshot endpoints. After the data directory is wiped, the restarted pod restores every key from the
// store before etcd starts.
func TestSingleMemberBacksUpAndRestoresAfterDataLoss(t *testing.T) {
	g := NewWithT(t)
	c := newCluster(t, 1)
	p := c.pods[0]
	p.start()
	g.Eventually(p.ready, time.Minute, 100*time.Millisecond).Should(BeTrue())
	cli := etcdserver.NewClient(t, p.client.String())

	// A fresh store gets a full snapshot as soon as the snapshotter starts.
	g.Eventually(func() *snapshot.Snapshot { return lastOf(c.snapshots(), snapshot.KindFull) }, time.Minute, 200*time.Millisecond).ShouldNot(BeNil())
	g.Eventually(func() string { return c.leaseHolder(fullLease) }, 30*time.Second, 200*time.Millisecond).ShouldNot(BeEmpty())

	// Deltas on the period, and the delta lease names the last stored revision.
	rev := put(t, cli, "a/", 50)
	g.Eventually(func() int64 {
		if d := lastOf(c.snapshots(), snapshot.KindIncr); d != nil {
			return d.LastRevision
		}
		return 0
	}, 30*time.Second, 200*time.Millisecond).Should(Equal(rev), "a delta on the period covers the writes")
	g.Eventually(func() string { return c.leaseHolder(deltaLease) }, 30*time.Second, 200*time.Millisecond).Should(Equal(strconv.FormatInt(rev, 10)))
	_, err := snapshot.LatestStream(c.snapshots())
	g.Expect(err).NotTo(HaveOccurred(), "no gap between the first full snapshot and the deltas")

	// GET /snapshot/full answers the snapshot it took, which is in the store and renews the full lease.
	rev = put(t, cli, "b/", 20)
	var full snapshot.Snapshot
	g.Expect(p.getJSON("/snapshot/full", &full)).To(Succeed())
	g.Expect(full.Kind).To(Equal(snapshot.KindFull))
	g.Expect(full.LastRevision).To(Equal(rev))
	g.Expect(full.CompressionSuffix).To(Equal(".gz"))
	g.Expect(c.snapshots()).To(ContainElement(HaveField("SnapName", full.SnapName)))
	g.Eventually(func() string { return c.leaseHolder(fullLease) }, 10*time.Second, 100*time.Millisecond).Should(Equal(strconv.FormatInt(rev, 10)))

	// GET /snapshot/delta cuts a delta now; /snapshot/latest lists the stream a restore would use.
	rev = put(t, cli, "c/", 10)
	var delta snapshot.Snapshot
	g.Expect(p.getJSON("/snapshot/delta", &delta)).To(Succeed())
	g.Expect(delta.Kind).To(Equal(snapshot.KindIncr))
	g.Expect(delta.LastRevision).To(Equal(rev))
	var latest httpapi.LatestSnapshots
	g.Expect(p.getJSON("/snapshot/latest", &latest)).To(Succeed())
	g.Expect(latest.FullSnapshot).NotTo(BeNil())
	g.Expect(latest.FullSnapshot.SnapName).To(Equal(full.SnapName))
	g.Expect(latest.DeltaSnapshots).NotTo(BeEmpty())
	g.Expect(latest.DeltaSnapshots[len(latest.DeltaSnapshots)-1].LastRevision).To(Equal(rev))

	want, wantRev := allKeys(t, cli)
	g.Expect(wantRev).To(Equal(rev))
	g.Expect(want).To(HaveLen(80))
	fullsBefore := 0
	for _, s := range c.snapshots() {
		if s.Kind == snapshot.KindFull {
			fullsBefore++
		}
	}

	// The volume loses the data: the restarted pod restores it from the store (case 7 for one member).
	p.stop()
	g.Expect(os.RemoveAll(p.dataDir)).To(Succeed())
	p.start()
	g.Eventually(p.ready, 2*time.Minute, 100*time.Millisecond).Should(BeTrue())
	got, gotRev := allKeys(t, cli)
	g.Expect(got).To(Equal(want), "every key, value and revision is back")
	g.Expect(gotRev).To(Equal(wantRev))

	// The restore took a full snapshot of the restored data, so the next restore needs no old deltas.
	snaps := c.snapshots()
	fullsAfter := 0
	for _, s := range snaps {
		if s.Kind == snapshot.KindFull {
			fullsAfter++
		}
	}
	g.Expect(fullsAfter).To(BeNumerically(">", fullsBefore))
	g.Expect(lastOf(snaps, snapshot.KindFull).LastRevision).To(Equal(wantRev))

	// Backups go on after the restore.
	rev = put(t, cli, "d/", 5)
	g.Eventually(func() int64 {
		if d := lastOf(c.snapshots(), snapshot.KindIncr); d != nil {
			return d.LastRevision
		}
		return 0
	}, 30*time.Second, 200*time.Millisecond).Should(Equal(rev))
}
