package etcdcontroller_test

import (
	"testing"

	. "github.com/onsi/gomega"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	etcdcontroller "github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/etcd"
)

// TestReconcilerRefusesScaleSubresourceBeyondTheLimit: upstream's CRD sets no maximum for spec.replicas,
// and `kubectl scale` (the scale subresource) passes no validation webhook registered for the Etcd kind,
// so `kubectl scale etcd etcd-main --replicas=100000` of a running 3-member cluster is stored. Druid must
// apply none of it when the next reconcile is asked for: the StatefulSet stays at 3 replicas, no member
// lease is added, and SpecValid=False names spec.replicas. Scaling back to 3 reconciles again.
func TestReconcilerRefusesScaleSubresourceBeyondTheLimit(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	healthyCluster(t, ns, 3)
	leasesBefore := memberLeaseNames(g, ns)
	g.Expect(leasesBefore).To(HaveLen(3))

	scaleTo(t, ns, 100000)
	g.Expect(getEtcd(g, ns).Spec.Replicas).To(Equal(int32(100000)), "the apiserver stores it: no schema maximum, no webhook on /scale")
	updateEtcd(t, ns, askForReconcile) // Gardener's next reconcile, or `kubectl annotate`

	expectRefused(t, getEtcd(g, ns), "spec.replicas")
	g.Consistently(func(g Gomega) {
		g.Expect(statefulSet(g, ns).Spec.Replicas).To(Equal(ptr.To(int32(3))), "the StatefulSet is left at 3")
		g.Expect(memberLeaseNames(g, ns)).To(Equal(leasesBefore), "no member lease added")
	}).WithTimeout(3 * testConfig.StatusSyncPeriod).WithPolling(poll).Should(Succeed())

	scaleTo(t, ns, 3)
	updateEtcd(t, ns, askForReconcile)
	waitReconciled(t, ns)
	expectCondition(t, ns, etcdcontroller.ConditionTypeSpecValid, druidv1alpha1.ConditionTrue, etcdcontroller.ReasonSpecPassed)
	g.Expect(statefulSet(g, ns).Spec.Replicas).To(Equal(ptr.To(int32(3))))
}

// scaleTo sets the Etcd's replicas through the scale subresource, as `kubectl scale` does.
func scaleTo(t *testing.T, ns string, replicas int32) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		etcd := getEtcd(g, ns)
		scale := &autoscalingv1.Scale{}
		g.Expect(env.Client.SubResource("scale").Get(ctx, etcd, scale)).To(Succeed())
		scale.Spec.Replicas = replicas
		g.Expect(env.Client.SubResource("scale").Update(ctx, etcd, client.WithSubResourceBody(scale))).To(Succeed())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}

// memberLeaseNames lists the names of the namespace's member leases (druid's labels, named after pods).
func memberLeaseNames(g Gomega, ns string) []string {
	list := &coordinationv1.LeaseList{}
	g.Expect(env.Client.List(ctx, list, client.InNamespace(ns))).To(Succeed())
	var names []string
	for _, l := range list.Items {
		if l.Labels[druidv1alpha1.LabelComponentKey] == druidv1alpha1.ComponentMemberLease {
			names = append(names, l.Name)
		}
	}
	return names
}
