package sidecar

import (
	"crypto/sha256"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/sidecar"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapstore"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

// storeObjects lists every snapshot under cfg with the SHA-256 of its stored bytes.
func storeObjects(t *testing.T, cfg snapstore.Config) []string {
	t.Helper()
	s, err := snapstore.New(t.Context(), cfg, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
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
		_, err = io.Copy(h, rc)
		_ = rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s %x", snap.SnapName, h.Sum(nil)))
	}
	return out
}

// A pod of a NEW Etcd whose sidecar has a restore source (the flags druid renders from the Etcd's restore
// annotations: another prefix in the same container, a revision inside a delta) starts with exactly the
// source cluster's keyspace at that revision, at that revision, backs up into its own prefix from there,
// and leaves the source's snapshots as they were.
func TestNewEtcdStartsFromTheSourceAtARevision(t *testing.T) {
	g := NewWithT(t)
	old := newCluster(t, 1)
	src := old.pods[0]
	src.start()
	g.Eventually(src.ready, time.Minute, 100*time.Millisecond).Should(BeTrue())
	cli := etcdserver.NewClient(t, src.client.String())
	put(t, cli, "before/", 30)
	from := put(t, cli, "bad/", 1) // the bad write
	last := put(t, cli, "after/", 20)
	target := from - 1
	g.Eventually(func() int64 {
		if d := lastOf(old.snapshots(), snapshot.KindIncr); d != nil {
			return d.LastRevision
		}
		return 0
	}, 30*time.Second, 200*time.Millisecond).Should(Equal(last), "the deltas cover every write")
	resp, err := cli.Get(t.Context(), "", clientv3.WithPrefix(), clientv3.WithRev(target))
	g.Expect(err).NotTo(HaveOccurred())
	want := map[string]kv{}
	for _, k := range resp.Kvs {
		want[string(k.Key)] = kv{Value: string(k.Value), CreateRevision: k.CreateRevision, ModRevision: k.ModRevision, Version: k.Version}
	}
	g.Expect(want).To(HaveLen(30))
	src.stop()
	before := storeObjects(t, old.store)

	fresh := newCluster(t, 1)
	p := fresh.pods[0]
	fresh.store = old.store
	fresh.store.Prefix = "etcd-main-restored"
	p.sidecar.Store = fresh.store
	p.sidecar.RestoreSource = sidecar.RestoreSourceOptions{Prefix: old.store.Prefix, Revision: target}
	p.start()
	g.Eventually(p.ready, 2*time.Minute, 100*time.Millisecond).Should(BeTrue())
	got, rev := allKeys(t, etcdserver.NewClient(t, p.client.String()))
	g.Expect(rev).To(Equal(target))
	g.Expect(got).To(Equal(want), "the source's keyspace at the revision, every key with its revisions")

	full := lastOf(fresh.snapshots(), snapshot.KindFull)
	g.Expect(full).NotTo(BeNil())
	g.Expect(full.LastRevision).To(Equal(target), "the new prefix starts with a full snapshot of the restored data")
	g.Expect(storeObjects(t, old.store)).To(Equal(before), "the source's snapshots are unchanged")
}
