package etcdcontroller_test

import (
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// etcdSeries reads the per-Etcd series name{namespace, name=etcd-main} from controller-runtime's registry
// (what druid's metrics endpoint serves) as label set of the further labels → value.
func etcdSeries(g Gomega, namespace, name string) map[string]float64 {
	families, err := metrics.Registry.Gather()
	g.Expect(err).NotTo(HaveOccurred())
	out := map[string]float64{}
	for _, family := range families {
		if family.GetName() != name {
			continue
		}
		for _, m := range family.GetMetric() {
			labels, ours := "", 0
			for _, l := range m.GetLabel() {
				switch {
				case l.GetName() == "namespace" && l.GetValue() == namespace, l.GetName() == "name" && l.GetValue() == etcdName:
					ours++
				default:
					labels += l.GetName() + "=" + l.GetValue() + ","
				}
			}
			if ours == 2 {
				out[labels] = m.GetGauge().GetValue() + m.GetCounter().GetValue()
			}
		}
	}
	return out
}

// TestPerEtcdMetricsFollowTheCache: druid's collector serves an Etcd's series from the cache once the
// Etcd exists, with its conditions as the status has them, and none after the Etcd is gone.
func TestPerEtcdMetricsFollowTheCache(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	createEtcd(t, ns, 3)
	etcd := waitReconciled(t, ns)
	ready := druidv1alpha1.FindCondition(etcd.Status.Conditions, druidv1alpha1.ConditionTypeReady)
	g.Expect(ready).NotTo(BeNil())

	g.Eventually(func(g Gomega) map[string]float64 { return etcdSeries(g, ns, "etcddruid_etcd_replicas") }).
		WithTimeout(timeout).WithPolling(poll).Should(Equal(map[string]float64{"": 3}))
	g.Eventually(func(g Gomega) map[string]float64 { return etcdSeries(g, ns, "etcddruid_etcd_condition") }).
		WithTimeout(timeout).WithPolling(poll).Should(HaveKeyWithValue(
		"condition=Ready,reason="+ready.Reason+",status="+string(ready.Status)+",", 1.0))
	g.Expect(etcdSeries(g, ns, "etcddruid_etcd_quorum_loss_recoveries_total")).To(Equal(map[string]float64{"": 0}))

	g.Expect(env.Client.Delete(ctx, etcd)).To(Succeed())
	g.Eventually(func(g Gomega) map[string]float64 { return etcdSeries(g, ns, "etcddruid_etcd_replicas") }).
		WithTimeout(timeout).WithPolling(poll).Should(BeEmpty())
}
