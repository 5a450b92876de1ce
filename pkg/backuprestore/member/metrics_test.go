package member_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/member"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
	"github.com/gardener-etcd/gardener-etcd/test/support/metricstest"
)

// etcdbr_member_promote_duration_seconds{succeeded} times each promotion by outcome (both series exist
// from the start, as upstream); etcdbr_cluster_size and etcdbr_is_learner follow the member list the
// local member was found in.
func TestPromotionAndMembershipMetrics(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	const promote = "etcdbr_member_promote_duration_seconds"
	succeeded := func(v string) map[string]string { return map[string]string{"succeeded": v} }
	c := etcdserver.StartCluster(t, 3, nil)
	cli := c.Client(t)
	learner := etcdserver.StartLearner(t, cli, "m3")
	registry := prometheus.NewPedanticRegistry()
	metrics := member.NewMetrics(registry)
	g.Expect(metricstest.Count(t, registry, promote, succeeded("true"))).To(BeZero())
	g.Expect(metricstest.Count(t, registry, promote, succeeded("false"))).To(BeZero())

	g.Expect(metrics.PromoteLearner(ctx, cli, uint64(learner.Etcd.Server.MemberID()), 200*time.Millisecond, testr.New(t))).To(Succeed())
	g.Expect(metricstest.Count(t, registry, promote, succeeded("true"))).To(Equal(uint64(1)))

	// The promoted member answers a member list itself once it applied its promotion.
	var local *member.Local
	g.Eventually(func() (err error) {
		local, err = member.LocalMember(ctx, learner.Client(t), learner.Endpoint())
		return err
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
	metrics.Observe(local)
	g.Expect(metricstest.Value(t, registry, "etcdbr_cluster_size", nil)).To(Equal(4.0))
	g.Expect(metricstest.Value(t, registry, "etcdbr_is_learner", nil)).To(Equal(0.0))

	g.Expect(metrics.PromoteLearner(ctx, cli, 0xdead, time.Second, testr.New(t))).To(MatchError(ContainSubstring("member not found")))
	g.Expect(metricstest.Count(t, registry, promote, succeeded("false"))).To(Equal(uint64(1)))
}
