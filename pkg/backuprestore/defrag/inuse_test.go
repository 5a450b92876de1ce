package defrag

import (
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
	"github.com/gardener-etcd/gardener-etcd/test/support/metricstest"
)

// A read open across a compaction's last commit (here a snapshot stream, in a cluster also a long range
// or a scheduled full snapshot) keeps bbolt from reusing the pages the compaction freed, and while
// NOSPACE refuses writes no member commits again: etcd's figure of the data in use stays as high as
// before the compaction. The recovery does not take that figure for data over the quota: it makes every
// member commit, reads the figure again, and disarms — after its own compaction (whose request finds the
// history compacted already) and when the history may not be compacted yet but a previous backup
// leader's recovery compacted it, where no request of the recovery commits and the figure needs two
// refreshes.
func TestNoSpaceRecoveryAfterACompactionUnderAnOpenRead(t *testing.T) {
	for _, tc := range []struct {
		name         string
		compact      func(int64) (int64, bool)
		leastRefresh float64
	}{
		{name: "the recovery compacts", compact: nil, leastRefresh: 1},
		{name: "a previous backup leader compacted", compact: func(int64) (int64, bool) { return 0, false }, leastRefresh: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			c := etcdserver.StartCluster(t, 1, withQuota)
			cli := c.Client(t)
			w := fillUntilNoSpace(t, cli, 32, 16<<10)
			compactUnderAnOpenRead(t, cli)
			st, err := cli.Status(t.Context(), c.Members[0].Endpoint())
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(float64(st.DbSizeInUse)).To(BeNumerically(">=", DisarmBelow*smallQuota),
				"etcd reports the pages the compaction freed as in use (%d bytes)", st.DbSizeInUse)

			registry := prometheus.NewPedanticRegistry()
			k, err := newKeeper(KeepOptions{Defrag: Options{Client: cli, Metrics: NewMetrics(registry), Log: testr.New(t)},
				CompactRevision: tc.compact})
			g.Expect(err).NotTo(HaveOccurred())
			k.check(t.Context(), time.Now(), false)

			g.Expect(metricstest.Value(t, registry, "etcdbr_nospace_over_quota", nil)).To(BeZero())
			g.Expect(noSpaceActive(g, cli)).To(BeFalse())
			g.Expect(metricstest.Value(t, registry, "etcdbr_nospace_recovery_steps_total", map[string]string{"step": stepRefresh, "succeeded": "true"})).
				To(BeNumerically(">=", tc.leastRefresh))
			alarms, err := cli.AlarmList(t.Context())
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(alarms.Alarms).To(BeEmpty(), "the alarm the refresh raised is cleared")
			expectAcked(g, cli, w)
			_, err = cli.Put(t.Context(), "after", "recovery")
			g.Expect(err).NotTo(HaveOccurred())
		})
	}
}

// Once the NOSPACE alarm is disarmed by someone else, the refresh raises no alarm: it would refuse writes
// again, if only for a moment.
func TestRefreshRaisesNoAlarmOnceNoSpaceIsDisarmed(t *testing.T) {
	g := NewWithT(t)
	c := etcdserver.StartCluster(t, 1, withQuota)
	cli := c.Client(t)
	registry := prometheus.NewPedanticRegistry()
	k, err := newKeeper(KeepOptions{Defrag: Options{Client: cli, Metrics: NewMetrics(registry), Log: testr.New(t)}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(k.refreshInUse(t.Context())).To(MatchError(errNoSpaceGone))
	g.Expect(metricstest.Value(t, registry, "etcdbr_nospace_recovery_steps_total", map[string]string{"step": stepRefresh, "succeeded": "true"})).To(BeZero())
	g.Expect(noSpaceActive(g, cli)).To(BeFalse())
}

// A full snapshot of this sidecar begun before the recovery's compaction holds its read open through
// every refresh, and the single member's figure of the data in use stays as high as before the
// compaction. The recovery takes that for no verdict: no over-quota report, no backoff, the alarm stays,
// and the first check after the stream ended recovers. It judges the figure as it is when the stream
// began after the recovery's compaction or the compaction was not its own (neither holds what the
// recovery freed), when the read is another client's (the sidecar cannot see it), and once it waited
// snapshotStreamWaitLimit, also at the attempts after that.
func TestNoSpaceRecoveryWaitsForThisSidecarsSnapshotStream(t *testing.T) {
	type streamSince func(opened time.Time, open *atomic.Bool) func() (time.Time, bool)
	ours := func(opened time.Time, open *atomic.Bool) func() (time.Time, bool) {
		return func() (time.Time, bool) { return opened, open.Load() }
	}
	for _, tc := range []struct {
		name  string
		since streamSince
		// compactedBefore: the history was compacted under the open read before the recovery ran, whose
		// own compaction then finds nothing to do.
		compactedBefore bool
		// waited is how long after the first check the second runs while the stream is still open.
		waited  time.Duration
		verdict bool // the first check (or, with waited, the second) reports over the quota
	}{
		{name: "this sidecar's full snapshot", since: ours},
		{name: "this sidecar's full snapshot, still open just before the wait limit", since: ours, waited: snapshotStreamWaitLimit - time.Second},
		{name: "this sidecar's full snapshot, open for the wait limit", since: ours, waited: snapshotStreamWaitLimit, verdict: true},
		{name: "this sidecar's full snapshot across a compaction not the recovery's", since: ours, compactedBefore: true, verdict: true},
		{name: "a full snapshot begun after the recovery's compaction", verdict: true,
			since: func(_ time.Time, open *atomic.Bool) func() (time.Time, bool) {
				return func() (time.Time, bool) { return time.Now(), open.Load() }
			}},
		{name: "another client's read", verdict: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			c := etcdserver.StartCluster(t, 1, withQuota)
			cli := c.Client(t)
			w := fillUntilNoSpace(t, cli, 32, 16<<10)
			opened := time.Now()
			stream := openRead(t, cli)
			defer stream.Close()
			if tc.compactedBefore {
				compactAll(t, cli)
			}

			registry := prometheus.NewPedanticRegistry()
			report := &Report{}
			var open atomic.Bool
			open.Store(true)
			const backoff = time.Hour
			opts := KeepOptions{Defrag: Options{Client: cli, Metrics: NewMetrics(registry), Log: testr.New(t)},
				RecoveryBackoff: backoff, MaxRecoveryBackoff: 4 * backoff, Report: report}
			if tc.since != nil {
				opts.SnapshotStreamSince = tc.since(opened, &open)
			}
			k, err := newKeeper(opts)
			g.Expect(err).NotTo(HaveOccurred())
			overQuota := func() float64 { return metricstest.Value(t, registry, "etcdbr_nospace_over_quota", nil) }

			now := time.Now()
			k.check(t.Context(), now, false)
			if tc.waited > 0 {
				g.Expect(overQuota()).To(BeZero(), "the first check waits for the stream")
				now = now.Add(tc.waited)
				k.check(t.Context(), now, false)
			}
			g.Expect(noSpaceActive(g, cli)).To(BeTrue(), "the alarm stays while the read hides what the compaction freed")
			if tc.verdict {
				g.Expect(overQuota()).To(Equal(1.0))
				g.Expect(report.OverQuota()).To(ContainSubstring("live data over the quota after compaction"))
				g.Expect(k.backoff).To(Equal(backoff))
				// The next attempt, after the backoff, judges at once again: its backoff doubles.
				k.check(t.Context(), now.Add(backoff), false)
				g.Expect(k.backoff).To(Equal(2*backoff), "the attempt after the backoff judged instead of waiting again")
				return
			}
			g.Expect(overQuota()).To(BeZero(), "no over-quota report while this sidecar's snapshot streams")
			g.Expect(report.OverQuota()).To(BeEmpty())
			g.Expect(k.backoff).To(BeZero())

			if _, err := io.Copy(io.Discard, stream); err != nil {
				t.Fatalf("reading the snapshot stream to its end: %v", err)
			}
			open.Store(false)
			k.check(t.Context(), now, false)
			g.Expect(noSpaceActive(g, cli)).To(BeFalse(), "the first check after the stream ended recovers")
			g.Expect(overQuota()).To(BeZero())
			expectAcked(g, cli, w)
			_, err = cli.Put(t.Context(), "after", "recovery")
			g.Expect(err).NotTo(HaveOccurred())
		})
	}
}

// compactUnderAnOpenRead compacts the whole history physically while a snapshot stream holds a read
// transaction begun before the compaction, and then reads the stream to its end: etcd closes the
// snapshot's transaction before it ends the stream, so no read is left open, and nothing has committed
// since the compaction's last batch.
func compactUnderAnOpenRead(t *testing.T, cli *clientv3.Client) {
	t.Helper()
	stream := openRead(t, cli)
	defer stream.Close()
	compactAll(t, cli)
	if _, err := io.Copy(io.Discard, stream); err != nil {
		t.Fatalf("reading the snapshot stream to its end: %v", err)
	}
}

// openRead opens a snapshot stream and returns it once etcd began the snapshot's read transaction.
func openRead(t *testing.T, cli *clientv3.Client) io.ReadCloser {
	t.Helper()
	stream, err := cli.Snapshot(t.Context())
	if err != nil {
		t.Fatalf("opening a snapshot stream: %v", err)
	}
	// The first byte arrives after etcd began the snapshot's read transaction.
	if _, err := io.ReadFull(stream, make([]byte, 1)); err != nil {
		t.Fatalf("reading the snapshot stream: %v", err)
	}
	return stream
}

// compactAll compacts the whole history physically.
func compactAll(t *testing.T, cli *clientv3.Client) {
	t.Helper()
	resp, err := cli.Get(t.Context(), "key/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Compact(t.Context(), resp.Header.Revision, clientv3.WithCompactPhysical()); err != nil {
		t.Fatalf("compacting to revision %d: %v", resp.Header.Revision, err)
	}
}
