package sidecar

import (
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
)

// TestBackupLeaderStoresBufferedRevisionsWhenQuorumIsLost: with a delta period far longer than the test,
// the writes since the first full snapshot exist only in the backup leader's buffer. When both followers'
// etcd stop, the leader's member loses its leadership (no quorum) and the term ends; its sidecar stores
// the buffer as a delta, so a bootstrap from the backup (druid's case 10) finds every acknowledged write.
func TestBackupLeaderStoresBufferedRevisionsWhenQuorumIsLost(t *testing.T) {
	g := NewWithT(t)
	c := newCluster(t, 3)
	for _, p := range c.pods {
		p.sidecar.DeltaSnapshotPeriod = time.Hour
	}
	cli := c.startAll()
	g.Eventually(c.leaseHolder, time.Minute, 200*time.Millisecond).WithArguments(fullLease).ShouldNot(BeEmpty(), "the first full snapshot")
	full := lastOf(c.snapshots(), snapshot.KindFull)
	rev := putRetrying(t, cli, "acked/", 20)
	g.Expect(rev).To(BeNumerically(">", full.LastRevision))

	leader := c.leaderIndex(cli)
	for i, p := range c.pods {
		if i != leader {
			p.stopEtcd()
		}
	}
	g.Eventually(c.lastDeltaRevision, time.Minute, 200*time.Millisecond).Should(Equal(rev), "the buffered revisions are stored once the cluster has no leader")
	g.Expect(uncovered(c.snapshots(), full.LastRevision, rev)).To(BeEmpty())
	g.Eventually(c.leaseHolder, 30*time.Second, 200*time.Millisecond).WithArguments(deltaLease).Should(Equal(strconv.FormatInt(rev, 10)))
}
