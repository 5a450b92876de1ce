package sidecar

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
)

// putRetrying writes n keys, retrying each write while the cluster elects a new leader.
func putRetrying(t *testing.T, cli *clientv3.Client, prefix string, n int) int64 {
	t.Helper()
	var rev int64
	for i := range n {
		deadline := time.Now().Add(30 * time.Second)
		for {
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
			resp, err := cli.Put(ctx, prefix+strconv.Itoa(i), "v")
			cancel()
			if err == nil {
				rev = resp.Header.Revision
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("writing %s%d: %v", prefix, i, err)
			}
		}
	}
	return rev
}

// lastDeltaRevision is the highest revision any delta in the store covers.
func (c *cluster) lastDeltaRevision() int64 {
	if d := lastOf(c.snapshots(), snapshot.KindIncr); d != nil {
		return d.LastRevision
	}
	return 0
}

// leaderIndex waits for a raft leader and returns the index of its pod.
func (c *cluster) leaderIndex(cli *clientv3.Client) int {
	c.t.Helper()
	leader := -1
	NewWithT(c.t).Eventually(func() int {
		for i, p := range c.pods {
			st, err := cli.Status(c.t.Context(), p.client.String())
			if err == nil && st.Leader == st.Header.MemberId {
				leader = i
			}
		}
		return leader
	}, 30*time.Second, 200*time.Millisecond).ShouldNot(Equal(-1))
	return leader
}

// uncovered returns the revisions in (from, to] that no delta in snaps covers.
func uncovered(snaps []*snapshot.Snapshot, from, to int64) []int64 {
	var missing []int64
	for rev := from + 1; rev <= to; rev++ {
		if !slices.ContainsFunc(snaps, func(s *snapshot.Snapshot) bool {
			return s.Kind == snapshot.KindIncr && s.StartRevision <= rev && rev <= s.LastRevision
		}) {
			missing = append(missing, rev)
		}
	}
	return missing
}

// TestThreeMembersNewBackupLeaderContinuesDeltas bootstraps a 3-member Etcd through the initializer, lets
// the backup leader (the sidecar of the raft leader) back it up, checks that a follower forwards a
// snapshot request to it, then stops the leader's etcd: another sidecar becomes the backup leader and
// continues the deltas from the store's last revision, without a revision missing from the store.
func TestThreeMembersNewBackupLeaderContinuesDeltas(t *testing.T) {
	g := NewWithT(t)
	c := newCluster(t, 3)
	cli := c.startAll()

	rev := putRetrying(t, cli, "a/", 30)
	g.Eventually(c.lastDeltaRevision, time.Minute, 200*time.Millisecond).Should(Equal(rev))

	leaderIdx := c.leaderIndex(cli)
	follower := c.pods[(leaderIdx+1)%3]

	// A follower's sidecar forwards to the backup leader's, which takes the snapshot.
	var full snapshot.Snapshot
	g.Expect(follower.getJSON("/snapshot/full", &full)).To(Succeed())
	g.Expect(full.Kind).To(Equal(snapshot.KindFull))
	g.Expect(full.LastRevision).To(Equal(rev))

	// The leader's etcd goes away; the other two keep quorum and keep taking writes.
	c.pods[leaderIdx].stopEtcd()
	var rest []string
	for i, p := range c.pods {
		if i != leaderIdx {
			rest = append(rest, p.client.String())
		}
	}
	cli2 := etcdserver.NewClient(t, rest...)
	rev2 := putRetrying(t, cli2, "b/", 30)
	g.Expect(rev2).To(BeNumerically(">", rev))
	g.Eventually(c.lastDeltaRevision, time.Minute, 200*time.Millisecond).Should(Equal(rev2), "a new backup leader cuts deltas")

	snaps := c.snapshots()
	stream, err := snapshot.LatestStream(snaps)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(stream.Full.LastRevision).To(Equal(full.LastRevision))
	g.Expect(stream.LastRevision()).To(Equal(rev2))
	g.Expect(uncovered(snaps, full.LastRevision, rev2)).To(BeEmpty(), "no revision after the full snapshot is missing from the deltas")
	g.Eventually(func() string { return c.leaseHolder(deltaLease) }, 30*time.Second, 200*time.Millisecond).Should(Equal(strconv.FormatInt(rev2, 10)))

	// The surviving sidecars serve snapshot requests through the new backup leader.
	rev3 := putRetrying(t, cli2, "c/", 3)
	var delta snapshot.Snapshot
	g.Expect(follower.getJSON("/snapshot/delta", &delta)).To(Succeed())
	g.Expect(delta.Kind).To(Equal(snapshot.KindIncr))
	g.Expect(delta.LastRevision).To(Equal(rev3))
}
