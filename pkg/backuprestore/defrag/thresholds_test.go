package defrag

import (
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
	"github.com/gardener-etcd/gardener-etcd/test/support/metricstest"
)

func TestThresholdTriggers(t *testing.T) {
	const mib = 1 << 20
	th := Thresholds{Fragmentation: 0.5, MinReclaimable: 32 * mib, Quota: 0.8}
	for name, tc := range map[string]struct {
		spaces []Space
		want   Trigger
	}{
		"small and dense":                   {[]Space{{DBSize: 100 * mib, DBSizeInUse: 90 * mib, Quota: 8192 * mib}}, ""},
		"fragmented":                        {[]Space{{DBSize: 100 * mib, DBSizeInUse: 40 * mib, Quota: 8192 * mib}}, TriggerFragmentation},
		"fragmented, too little to reclaim": {[]Space{{DBSize: 40 * mib, DBSizeInUse: 10 * mib, Quota: 8192 * mib}}, ""},
		"near the quota, reclaimable":       {[]Space{{DBSize: 900 * mib, DBSizeInUse: 700 * mib, Quota: 1000 * mib}}, TriggerQuota},
		"near the quota, all of it live":    {[]Space{{DBSize: 900 * mib, DBSizeInUse: 850 * mib, Quota: 1000 * mib}}, ""},
		// In use just under the threshold: a few free pages would bring the file under it, and the next
		// writes over it again, defragmenting (and moving leadership) at every check.
		"near the quota, too little to reclaim": {[]Space{{DBSize: 801 * mib, DBSizeInUse: 799*mib + 900<<10, Quota: 1000 * mib}}, ""},
		"one member of three over": {[]Space{
			{DBSize: 100 * mib, DBSizeInUse: 100 * mib, Quota: 1000 * mib},
			{DBSize: 850 * mib, DBSizeInUse: 200 * mib, Quota: 1000 * mib},
		}, TriggerQuota},
		"quota unknown": {[]Space{{DBSize: 900 * mib, DBSizeInUse: 700 * mib}}, ""},
	} {
		t.Run(name, func(t *testing.T) {
			if got := th.trigger(tc.spaces); got != tc.want {
				t.Fatalf("trigger = %q, want %q", got, tc.want)
			}
		})
	}
	if got := (Thresholds{}).trigger([]Space{{DBSize: 90 * mib, DBSizeInUse: 1, Quota: 100 * mib}}); got != "" {
		t.Fatalf("zero thresholds triggered %q", got)
	}
}

// A check defragments a member whose file is over the quota threshold with room to reclaim, and not a
// dense one; the run is counted under its trigger.
func TestCheckDefragmentsOverTheQuotaThreshold(t *testing.T) {
	g := NewWithT(t)
	c := etcdserver.StartCluster(t, 1, withQuota)
	cli := c.Client(t)
	etcdserver.Fragment(t, cli) // about 3 MiB written, deleted and compacted: over 50% of the 4 MiB quota, little in use
	registry := prometheus.NewPedanticRegistry()
	k, err := newKeeper(KeepOptions{Defrag: Options{Client: cli, Metrics: NewMetrics(registry), Log: testr.New(t)},
		Thresholds: Thresholds{Quota: 0.5}})
	g.Expect(err).NotTo(HaveOccurred())
	runs := func() float64 {
		return metricstest.Value(t, registry, "etcdbr_defragmentation_runs_total", map[string]string{"trigger": string(TriggerQuota)})
	}
	before, err := cli.Status(t.Context(), c.Members[0].Endpoint())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(float64(before.DbSize)).To(BeNumerically(">", 0.5*smallQuota))

	k.check(t.Context(), time.Now(), false)
	g.Expect(runs()).To(Equal(1.0))
	after, err := cli.Status(t.Context(), c.Members[0].Endpoint())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(after.DbSize).To(BeNumerically("<", before.DbSize))

	k.check(t.Context(), time.Now(), false)
	g.Expect(runs()).To(Equal(1.0), "a defragmented database is not defragmented again")
}
