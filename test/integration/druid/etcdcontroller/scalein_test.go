package etcdcontroller_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	etcdcontroller "github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/etcd"
)

// 3 → 1: the ConfigMap is rendered for one member at once, but the StatefulSet keeps 3 replicas
// (and the members their leases) while members 1 and 2 are still in the etcd membership, so their pods
// run while the backup leader removes them with quorum (the PodDisruptionBudget keeps the quorum of the
// three); one mark is not enough. Once both leases carry the mark, the StatefulSet goes to 1, and the
// survivor is Ready with a cluster size of 1.
func TestScaleInThreeToOneWaitsForTheMembershipToShrink(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	s := healthyCluster(t, ns, 3)

	updateEtcd(t, ns, func(e *druidv1alpha1.Etcd) {
		e.Spec.Replicas = 1
		e.Annotations = map[string]string{druidv1alpha1.GardenerOperationAnnotation: druidv1alpha1.OperationReconcile}
	})
	expectScaleInHeld(t, ns, 3, "scale-in from 3 to 1", "etcd-main-2, etcd-main-1")
	g.Eventually(func(g Gomega) string {
		cm := &corev1.ConfigMap{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: etcdName + "-config"}, cm)).To(Succeed())
		return cm.Data["etcd.conf.yaml"]
	}).WithTimeout(timeout).WithPolling(poll).ShouldNot(ContainSubstring(etcdName+"-1="), "the configuration names one member, so the backup leader knows whom to remove")

	pdbMinAvailable := func(g Gomega) int32 {
		pdb := &policyv1.PodDisruptionBudget{}
		g.Expect(exists(ns, etcdName, pdb)()).To(Succeed())
		return pdb.Spec.MinAvailable.IntVal
	}
	g.Consistently(pdbMinAvailable).WithTimeout(2*time.Second).WithPolling(200*time.Millisecond).Should(Equal(int32(2)),
		"the three members that still vote keep their quorum's protection")

	markLeftCluster(t, ns, 2)
	expectScaleInHeld(t, ns, 3, "scale-in from 3 to 1", "removed etcd-main-1 from")

	markLeftCluster(t, ns, 1)
	g.Eventually(func(g Gomega) *int32 { return statefulSet(g, ns).Spec.Replicas }).
		WithTimeout(timeout).WithPolling(poll).Should(Equal(ptr.To(int32(1))))
	s.stop("etcd-main-1")
	s.stop("etcd-main-2")
	deletePods(t, ns, "etcd-main-1", "etcd-main-2")
	setStatefulSetRolledOut(t, ns, 1)
	s.resume("etcd-main-0", fmt.Sprintf("%016x:cdf818194e3a8c32:Leader", 1))
	waitReconciled(t, ns)
	g.Eventually(func(g Gomega) {
		etcd := getEtcd(g, ns)
		g.Expect(recordedClusterSize(g, ns)).To(Equal(ptr.To(int32(1))))
		g.Expect(etcd.Status.Members).To(HaveLen(1))
		g.Expect(druidv1alpha1.FindCondition(etcd.Status.Conditions, druidv1alpha1.ConditionTypeReady).Status).To(Equal(druidv1alpha1.ConditionTrue))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Eventually(pdbMinAvailable).WithTimeout(timeout).WithPolling(poll).Should(Equal(int32(0)), "a single member blocks no drain")
}

// expectScaleInHeld waits until the spec reconcile holds the scale-in (lastOperation Requeue naming the
// members still in the cluster, event ScaleInHeldBack) and checks that the StatefulSet and the members'
// leases stay meanwhile.
func expectScaleInHeld(t *testing.T, ns string, replicas int32, reason, members string) {
	t.Helper()
	g := NewWithT(t)
	g.Eventually(func(g Gomega) {
		op := getEtcd(g, ns).Status.LastOperation
		g.Expect(op.State).To(Equal(druidv1alpha1.LastOperationStateRequeue))
		g.Expect(op.Description).To(ContainSubstring(reason))
		g.Expect(op.Description).To(ContainSubstring(members))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Expect(etcdEvents(g, ns, etcdcontroller.EventReasonScaleInHeldBack)).NotTo(BeEmpty())
	g.Consistently(func(g Gomega) {
		g.Expect(statefulSet(g, ns).Spec.Replicas).To(Equal(ptr.To(replicas)))
		for i := range int(replicas) {
			g.Expect(exists(ns, fmt.Sprintf("%s-%d", etcdName, i), &coordinationv1.Lease{})()).To(Succeed())
		}
	}).WithTimeout(2 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())
}

// markLeftCluster writes the backup leader's left-cluster mark on the lease of ordinal i, naming the
// member ID the test's sidecar renews it with.
func markLeftCluster(t *testing.T, ns string, i int) {
	t.Helper()
	g := NewWithT(t)
	g.Eventually(func() error {
		lease := &coordinationv1.Lease{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: fmt.Sprintf("%s-%d", etcdName, i)}, lease); err != nil {
			return err
		}
		metav1.SetMetaDataAnnotation(&lease.ObjectMeta, druidv1alpha1.LeftClusterAnnotation, strings.SplitN(holder(i), ":", 2)[0])
		return env.Client.Update(ctx, lease)
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}
