package sidecar

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

// The sidecar of a learner exports etcdbr_is_learner 1 and the cluster size with the learner counted
// (its own etcd refuses the member list, the others answer), and 0 once it was promoted.
func TestMembershipMetricsOfALearner(t *testing.T) {
	g := NewWithT(t)
	c := etcdserver.StartCluster(t, 3, nil)
	clusterCli := c.Client(t)
	learner := etcdserver.StartLearner(t, clusterCli, "m3")
	registry := prometheus.NewPedanticRegistry()
	metrics := member.NewMetrics(registry)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		observeMembership(ctx, learner.Client(t), clusterCli, learner.Endpoint(), metrics, 100*time.Millisecond, testr.New(t))
	}()
	defer func() { cancel(); <-done }()
	value := func(name string) func() float64 {
		return func() float64 { return metricstest.Value(t, registry, name, nil) }
	}

	g.Eventually(value("etcdbr_is_learner"), 30*time.Second, 100*time.Millisecond).Should(Equal(1.0))
	g.Expect(value("etcdbr_cluster_size")()).To(Equal(4.0))

	g.Eventually(func() error {
		_, err := clusterCli.MemberPromote(t.Context(), uint64(learner.Etcd.Server.MemberID()))
		return err
	}, time.Minute, 200*time.Millisecond).Should(Succeed())
	g.Eventually(value("etcdbr_is_learner"), 30*time.Second, 100*time.Millisecond).Should(Equal(0.0))
	g.Expect(value("etcdbr_cluster_size")()).To(Equal(4.0))
}
