package defrag

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/leader"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
	"github.com/gardener-etcd/gardener-etcd/test/support/metricstest"
)

// smallQuota is the --quota-backend-bytes of the members in these tests.
const smallQuota = 4 << 20

func withQuota(cfg *embed.Config) { cfg.QuotaBackendBytes = smallQuota }

// writes are what a writer was told about its puts.
type writes struct {
	// acked is the last acknowledged value of every key.
	acked map[string]string
	// refusedKey and refusedValue are the put answered with "database space exceeded". etcd applies the
	// put that takes the database over its quota and answers it with the error (raising the alarm), so
	// it may be what the key holds.
	refusedKey, refusedValue string
}

// fillUntilNoSpace puts values under keys (cycling through them, so overwriting them when there are
// fewer keys than puts) until etcd refuses a write with "database space exceeded".
func fillUntilNoSpace(t *testing.T, cli *clientv3.Client, keys int, valueSize int) writes {
	t.Helper()
	w := writes{acked: map[string]string{}}
	pad := strings.Repeat("v", valueSize)
	for i := 0; ; i++ {
		if i > 100000 {
			t.Fatal("no NOSPACE after 100000 writes")
		}
		key, value := fmt.Sprintf("key/%04d", i%keys), fmt.Sprintf("%08d-%s", i, pad)
		_, err := cli.Put(t.Context(), key, value)
		if errors.Is(err, rpctypes.ErrNoSpace) {
			w.refusedKey, w.refusedValue = key, value
			return w
		}
		if err != nil {
			t.Fatalf("put %d: %v", i, err)
		}
		w.acked[key] = value
	}
}

// noSpaceActive tells whether the cluster has an active NOSPACE alarm.
func noSpaceActive(g Gomega, cli *clientv3.Client) bool {
	resp, err := cli.AlarmList(context.Background())
	g.Expect(err).NotTo(HaveOccurred())
	for _, a := range resp.Alarms {
		if a.GetAlarm() == etcdserverpb.AlarmType_NOSPACE {
			return true
		}
	}
	return false
}

// expectAcked checks that every acknowledged write is readable with its last value (or the refused
// put's value, for its key).
func expectAcked(g Gomega, cli *clientv3.Client, w writes) {
	for k, v := range w.acked {
		resp, err := cli.Get(context.Background(), k)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(resp.Kvs).To(HaveLen(1), "key %s", k)
		if k == w.refusedKey {
			g.Expect(string(resp.Kvs[0].Value)).To(BeElementOf(v, w.refusedValue), "key %s", k)
			continue
		}
		g.Expect(string(resp.Kvs[0].Value)).To(Equal(v), "key %s", k)
	}
}

// The reproduced incident on a 3-member cluster with a 4 MiB quota: a writer overwrites keys until etcd
// refuses writes with NOSPACE. The backup leader's Keep, started per leadership term by a real elector
// on every member as in the sidecars, compacts, defragments followers and then the leader (moving
// leadership, which ends that sidecar's term; the next leader finishes), and disarms the alarm: writes
// succeed again without anyone running `etcdctl alarm disarm`, and every acknowledged write is readable.
func TestNoSpaceRecoveredWithoutManualDisarm(t *testing.T) {
	g := NewWithT(t)
	c := etcdserver.StartCluster(t, 3, withQuota)
	cli := c.Client(t)
	acked := fillUntilNoSpace(t, cli, 32, 16<<10)
	g.Expect(noSpaceActive(g, cli)).To(BeTrue())

	registry := prometheus.NewPedanticRegistry()
	metrics := NewMetrics(registry)
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for _, m := range c.Members {
		local := m.Client(t)
		elector, err := leader.New(leader.Options{Client: local, Endpoint: m.Endpoint(), ReelectionPeriod: 200 * time.Millisecond, Log: testr.New(t),
			Callbacks: leader.Callbacks{OnStartedLeading: func(term context.Context) {
				_ = Keep(term, KeepOptions{
					Defrag:      Options{Client: cli, Metrics: metrics, Log: testr.New(t).WithValues("sidecar", m.Config.Name)},
					CheckPeriod: 100 * time.Millisecond, RecoveryBackoff: 100 * time.Millisecond,
				})
			}}})
		g.Expect(err).NotTo(HaveOccurred())
		wg.Go(func() { elector.Run(ctx) })
	}

	g.Eventually(func(g Gomega) {
		g.Expect(noSpaceActive(g, cli)).To(BeFalse())
		_, err := cli.Put(context.Background(), "after", "recovery")
		g.Expect(err).NotTo(HaveOccurred())
	}).WithTimeout(2 * time.Minute).WithPolling(200 * time.Millisecond).Should(Succeed())

	expectAcked(g, cli, acked)
	for _, m := range c.Members {
		st, err := cli.Status(t.Context(), m.Endpoint())
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(float64(st.DbSize)).To(BeNumerically("<", DisarmBelow*smallQuota), "member %s", m.Config.Name)
	}
	steps := func(step, succeeded string) float64 {
		return metricstest.Value(t, registry, "etcdbr_nospace_recovery_steps_total", map[string]string{"step": step, "succeeded": succeeded})
	}
	for _, step := range []string{stepCompact, stepDefragment} {
		g.Expect(steps(step, "true")).To(BeNumerically(">=", 1), "step %s", step)
	}
	// The disarm may be the former leader's: moving leadership ends its term while its recovery goes on,
	// and when the term's end cancels the disarm request after etcd applied it, that step counts as failed
	// although the alarm is gone (and the next leader finds nothing to disarm).
	g.Expect(steps(stepDisarm, "true")+steps(stepDisarm, "false")).To(BeNumerically(">=", 1), "step %s", stepDisarm)
	g.Expect(metricstest.Value(t, registry, "etcdbr_nospace_over_quota", nil)).To(BeZero())
	g.Expect(metricstest.Value(t, registry, "etcdbr_defragmentation_runs_total", map[string]string{"trigger": "nospace"})).To(BeNumerically(">=", 1))
}

// Live data that does not fit under the quota cannot be recovered by compaction and defragmentation: the
// recovery ends over the quota (logged, etcdbr_nospace_over_quota 1), the alarm stays, and it backs off —
// a check before the backoff ends does not repeat it while nothing changed. Once data is deleted (deletes
// pass a NOSPACE alarm), the next check recovers at once, without waiting for the backoff.
func TestNoSpaceOverQuotaBacksOffUntilDataIsDeleted(t *testing.T) {
	g := NewWithT(t)
	c := etcdserver.StartCluster(t, 1, withQuota)
	cli := c.Client(t)
	fillOverDisarmLimit(t, c, cli)
	g.Expect(noSpaceActive(g, cli)).To(BeTrue())

	registry := prometheus.NewPedanticRegistry()
	report := &Report{}
	k, err := newKeeper(KeepOptions{Defrag: Options{Client: cli, Metrics: NewMetrics(registry), Log: testr.New(t)},
		RecoveryBackoff: time.Hour, MaxRecoveryBackoff: 4 * time.Hour, Report: report})
	g.Expect(err).NotTo(HaveOccurred())
	attempts := func() float64 {
		return metricstest.Value(t, registry, "etcdbr_nospace_recovery_steps_total", map[string]string{"step": stepCompact, "succeeded": "true"})
	}
	overQuota := func() float64 { return metricstest.Value(t, registry, "etcdbr_nospace_over_quota", nil) }

	t0 := time.Now()
	k.check(t.Context(), t0, false)
	g.Expect(attempts()).To(Equal(1.0))
	g.Expect(overQuota()).To(Equal(1.0))
	g.Expect(report.OverQuota()).To(ContainSubstring("live data over the quota after compaction"), "the report says why")
	g.Expect(noSpaceActive(g, cli)).To(BeTrue(), "an alarm over the quota stays")
	g.Expect(metricstest.Value(t, registry, "etcdbr_nospace_recovery_steps_total", map[string]string{"step": stepDisarm, "succeeded": "true"})).To(BeZero())

	for range 5 {
		k.check(t.Context(), t0.Add(time.Minute), false)
	}
	g.Expect(attempts()).To(Equal(1.0), "no new attempt before the backoff ends while nothing changed")
	// Deletes pass the alarm (as lease expiries and garbage collection do): the revision moves, but a
	// delete that frees too little to fit under the disarm limit does not start an attempt.
	_, err = cli.Delete(t.Context(), "big/0/00000")
	g.Expect(err).NotTo(HaveOccurred())
	for range 5 {
		k.check(t.Context(), t0.Add(2*time.Minute), false)
	}
	g.Expect(attempts()).To(Equal(1.0), "a changed revision alone does not start an attempt before the backoff ends")
	k.check(t.Context(), t0.Add(time.Hour), true) // also a scheduled run recovers rather than defragmenting only
	g.Expect(attempts()).To(Equal(2.0), "a new attempt after the backoff")
	g.Expect(overQuota()).To(Equal(1.0))

	// The operator deletes data and compacts (the runbook): the data in use now fits, and the next check
	// recovers within the backoff.
	del, err := cli.Delete(t.Context(), "big/", clientv3.WithPrefix())
	g.Expect(err).NotTo(HaveOccurred())
	_, err = cli.Compact(t.Context(), del.Header.Revision, clientv3.WithCompactPhysical())
	g.Expect(err).NotTo(HaveOccurred())
	// etcd counts the freed pages only after a later commit, and under NOSPACE nothing else commits: the
	// member is made to commit as the recovery itself does (refreshInUse), or the figure can stay stale.
	g.Eventually(func(g Gomega) {
		g.Expect(k.refreshInUse(t.Context())).To(Succeed())
		st, err := cli.Status(t.Context(), c.Members[0].Endpoint())
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(float64(st.DbSizeInUse)).To(BeNumerically("<", DisarmBelow*smallQuota))
	}).WithTimeout(30 * time.Second).Should(Succeed())
	k.check(t.Context(), t0.Add(time.Hour+time.Minute), false)
	g.Expect(attempts()).To(Equal(3.0), "deleted data starts a recovery within the backoff")
	g.Expect(overQuota()).To(BeZero())
	g.Expect(report.OverQuota()).To(BeEmpty())
	g.Expect(noSpaceActive(g, cli)).To(BeFalse())
	_, err = cli.Put(t.Context(), "after", "recovery")
	g.Expect(err).NotTo(HaveOccurred())
}

// The recovery compacts no further than CompactRevision allows (the sidecar: the revision its delta
// watch delivered), so history the backup does not hold yet stays readable in etcd.
func TestNoSpaceRecoveryCompactsNoFurtherThanAllowed(t *testing.T) {
	g := NewWithT(t)
	c := etcdserver.StartCluster(t, 1, withQuota)
	cli := c.Client(t)
	fillUntilNoSpace(t, cli, 32, 16<<10)
	var current int64
	k, err := newKeeper(KeepOptions{Defrag: Options{Client: cli, Log: testr.New(t)},
		CompactRevision: func(rev int64) (int64, bool) { current = rev; return rev - 5, true }})
	g.Expect(err).NotTo(HaveOccurred())

	k.check(t.Context(), time.Now(), false)
	g.Expect(noSpaceActive(g, cli)).To(BeFalse())
	g.Expect(current).To(BeNumerically(">", 5))
	_, err = cli.Get(t.Context(), "key/", clientv3.WithPrefix(), clientv3.WithRev(current-5))
	g.Expect(err).NotTo(HaveOccurred(), "revision %d is kept", current-5)
	_, err = cli.Get(t.Context(), "key/", clientv3.WithPrefix(), clientv3.WithRev(current-6))
	g.Expect(err).To(MatchError(rpctypes.ErrCompacted), "revision %d is compacted", current-6)
}

// fillOverDisarmLimit puts distinct keys until NOSPACE and every member's data — its file once
// defragmented — is over the disarm limit, so that no recovery can disarm. A member's file holds free
// pages too, so a NOSPACE may come with less data: then it defragments, disarms and fills on.
func fillOverDisarmLimit(t *testing.T, c *etcdserver.Cluster, cli *clientv3.Client) {
	t.Helper()
	value := strings.Repeat("v", 64<<10)
	for round := range 10 {
		for i := 0; ; i++ {
			_, err := cli.Put(t.Context(), fmt.Sprintf("big/%d/%05d", round, i), value)
			if errors.Is(err, rpctypes.ErrNoSpace) {
				break
			}
			if err != nil {
				t.Fatalf("put: %v", err)
			}
		}
		over := true
		for _, m := range c.Members {
			if _, err := cli.Defragment(t.Context(), m.Endpoint()); err != nil {
				t.Fatalf("defragmenting %s: %v", m.Config.Name, err)
			}
			st, err := cli.Status(t.Context(), m.Endpoint())
			if err != nil {
				t.Fatal(err)
			}
			over = over && float64(st.DbSize) >= DisarmBelow*float64(st.DbSizeQuota)
		}
		if over {
			return
		}
		alarms, err := cli.AlarmList(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range alarms.Alarms {
			if _, err := cli.AlarmDisarm(t.Context(), &clientv3.AlarmMember{MemberID: a.GetMemberID(), Alarm: a.GetAlarm()}); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Fatal("the data stayed under the disarm limit")
}

// On a 3-member cluster whose data in use does not fit under the disarm limit, defragmenting cannot help:
// the recovery says so (etcdbr_nospace_over_quota 1) after compacting, without defragmenting any member
// and without moving leadership — which would end the backup leader's term and have the next one repeat
// it, for ever.
func TestNoSpaceOverQuotaNeitherDefragmentsNorMovesLeadership(t *testing.T) {
	g := NewWithT(t)
	c := etcdserver.StartCluster(t, 3, withQuota)
	cli := c.Client(t)
	fillOverDisarmLimit(t, c, cli)
	g.Expect(noSpaceActive(g, cli)).To(BeTrue())
	leaderBefore := uint64(c.Leader().Etcd.Server.MemberID())

	registry := prometheus.NewPedanticRegistry()
	var defragmented []string
	k, err := newKeeper(KeepOptions{Defrag: Options{Client: cli, Metrics: NewMetrics(registry), Log: testr.New(t),
		BeforeDefragment: func(_ context.Context, m Member) { defragmented = append(defragmented, m.Name) }}})
	g.Expect(err).NotTo(HaveOccurred())

	k.check(t.Context(), time.Now(), false)
	g.Expect(metricstest.Value(t, registry, "etcdbr_nospace_over_quota", nil)).To(Equal(1.0))
	g.Expect(metricstest.Value(t, registry, "etcdbr_nospace_recovery_steps_total", map[string]string{"step": stepCompact, "succeeded": "true"})).To(Equal(1.0))
	g.Expect(defragmented).To(BeEmpty())
	g.Expect(metricstest.Value(t, registry, "etcdbr_defragmentation_runs_total", map[string]string{"trigger": string(TriggerNoSpace)})).To(BeZero())
	g.Expect(uint64(c.Leader().Etcd.Server.MemberID())).To(Equal(leaderBefore), "leadership stays")
	g.Expect(noSpaceActive(g, cli)).To(BeTrue())
}

// The recovery disarms the alarm before the full snapshot: writes are accepted again without waiting for
// the store, and a snapshot that fails (a store outage) neither undoes the disarm nor fails the recovery;
// it is counted as the step "snapshot".
func TestNoSpaceRecoveryDisarmsBeforeTheSnapshot(t *testing.T) {
	g := NewWithT(t)
	c := etcdserver.StartCluster(t, 1, withQuota)
	cli := c.Client(t)
	fillUntilNoSpace(t, cli, 32, 16<<10)
	registry := prometheus.NewPedanticRegistry()
	var alarmAtSnapshot []bool
	k, err := newKeeper(KeepOptions{Defrag: Options{Client: cli, Metrics: NewMetrics(registry), Log: testr.New(t),
		AfterDefrag: func(context.Context) error {
			alarmAtSnapshot = append(alarmAtSnapshot, noSpaceActive(g, cli))
			return errors.New("store unavailable")
		}}})
	g.Expect(err).NotTo(HaveOccurred())

	k.check(t.Context(), time.Now(), false)
	g.Expect(alarmAtSnapshot).To(Equal([]bool{false}), "one snapshot, taken after the disarm")
	g.Expect(noSpaceActive(g, cli)).To(BeFalse())
	g.Expect(k.backoff).To(BeZero(), "a failed snapshot does not fail the recovery")
	g.Expect(metricstest.Value(t, registry, "etcdbr_nospace_recovery_steps_total", map[string]string{"step": stepSnapshot, "succeeded": "false"})).To(Equal(1.0))
	g.Expect(metricstest.Value(t, registry, "etcdbr_nospace_recovery_steps_total", map[string]string{"step": stepDisarm, "succeeded": "true"})).To(Equal(1.0))
	_, err = cli.Put(t.Context(), "after", "recovery")
	g.Expect(err).NotTo(HaveOccurred())
}

// While the history may not be compacted yet (the sidecar: a store is configured and the term's
// snapshotter has not started) and the data in use does not fit without compacting, the recovery does
// nothing — no compaction, no defragmentation, no backoff, no over-quota verdict — and the next check
// tries again. Once the history is compacted (a previous backup leader's recovery did), it goes on
// without compacting: defragments and disarms.
func TestNoSpaceRecoveryWaitsWhileCompactionIsDeferred(t *testing.T) {
	g := NewWithT(t)
	c := etcdserver.StartCluster(t, 1, withQuota)
	cli := c.Client(t)
	fillUntilNoSpace(t, cli, 32, 16<<10)
	registry := prometheus.NewPedanticRegistry()
	k, err := newKeeper(KeepOptions{Defrag: Options{Client: cli, Metrics: NewMetrics(registry), Log: testr.New(t)},
		CompactRevision: func(int64) (int64, bool) { return 0, false }})
	g.Expect(err).NotTo(HaveOccurred())
	steps := func(step string) float64 {
		return metricstest.Value(t, registry, "etcdbr_nospace_recovery_steps_total", map[string]string{"step": step, "succeeded": "true"})
	}

	now := time.Now()
	k.check(t.Context(), now, false)
	g.Expect(noSpaceActive(g, cli)).To(BeTrue())
	g.Expect(steps(stepCompact)).To(BeZero())
	g.Expect(steps(stepDefragment)).To(BeZero())
	g.Expect(k.backoff).To(BeZero())
	g.Expect(metricstest.Value(t, registry, "etcdbr_nospace_over_quota", nil)).To(BeZero())

	st, err := cli.Status(t.Context(), c.Members[0].Endpoint())
	g.Expect(err).NotTo(HaveOccurred())
	_, err = cli.Compact(t.Context(), st.Header.Revision, clientv3.WithCompactPhysical())
	g.Expect(err).NotTo(HaveOccurred())
	k.check(t.Context(), now, false)
	g.Expect(noSpaceActive(g, cli)).To(BeFalse())
	g.Expect(steps(stepCompact)).To(BeZero())
	g.Expect(steps(stepDisarm)).To(Equal(1.0))
}

// etcdbr_nospace_over_quota describes the term that set it: when the term ends (Keep returns), the
// sidecar no longer leads, so it no longer reports the cluster over the quota.
func TestKeepClearsOverQuotaWhenTheTermEnds(t *testing.T) {
	g := NewWithT(t)
	c := etcdserver.StartCluster(t, 1, withQuota)
	cli := c.Client(t)
	fillOverDisarmLimit(t, c, cli)
	registry := prometheus.NewPedanticRegistry()
	overQuota := func() float64 { return metricstest.Value(t, registry, "etcdbr_nospace_over_quota", nil) }
	metrics := NewMetrics(registry)
	term, endTerm := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- Keep(term, KeepOptions{Defrag: Options{Client: cli, Metrics: metrics, Log: testr.New(t)},
			CheckPeriod: time.Hour})
	}()
	g.Eventually(overQuota).WithTimeout(time.Minute).Should(Equal(1.0))
	endTerm()
	g.Eventually(done).WithTimeout(time.Minute).Should(Receive(BeNil()))
	g.Expect(overQuota()).To(BeZero())
}
