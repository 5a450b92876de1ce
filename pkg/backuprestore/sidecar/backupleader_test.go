package sidecar

import (
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	. "github.com/onsi/gomega"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshotter"
	"github.com/gardener-etcd/gardener-etcd/test/support/backuptest"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

// The NOSPACE recovery compacts no history the backup does not hold: with a store it waits until the
// term's snapshotter runs (at the start of a term revisions after the store's last delta are in neither
// the store nor a buffer), then compacts up to what the delta watch delivered; without a store nothing
// needs the history.
func TestCompactableRevisionKeepsWhatTheBackupDoesNotHold(t *testing.T) {
	g := NewWithT(t)
	c := etcdserver.Start(t)
	cli := c.Client(t)

	rev, ok := (&backupLeader{}).compactableRevision(42)
	g.Expect(ok).To(BeTrue(), "without a store")
	g.Expect(rev).To(Equal(int64(42)))

	store := backuptest.Local(t)
	b := &backupLeader{store: store.SnapStore}
	_, ok = b.compactableRevision(42)
	g.Expect(ok).To(BeFalse(), "with a store while no snapshotter runs")

	cfg := snapshotter.Default()
	cfg.Schedule, cfg.DeltaSnapshotPeriod, cfg.GarbageCollectionPeriod = "", time.Hour, 0
	s, err := snapshotter.New(snapshotter.Options{Config: cfg, Client: cli, Store: store.SnapStore, Leases: snapshotter.NoLeases{}, Log: testr.New(t)})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(s.Start(t.Context())).To(Succeed())
	t.Cleanup(s.Stop)
	b.setActive(s)
	var last int64
	for i := range 5 {
		resp, err := cli.Put(t.Context(), fmt.Sprintf("k%d", i), "v")
		g.Expect(err).NotTo(HaveOccurred())
		last = resp.Header.Revision
	}
	g.Eventually(s.WatchedRevision).WithTimeout(30 * time.Second).Should(BeNumerically(">=", last))

	rev, ok = b.compactableRevision(last + 100)
	g.Expect(ok).To(BeTrue())
	g.Expect(rev).To(Equal(s.WatchedRevision()), "no further than the watch delivered")
	rev, ok = b.compactableRevision(1)
	g.Expect(ok).To(BeTrue())
	g.Expect(rev).To(Equal(int64(1)))
}
