package etcdcontroller_test

import (
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// The reference's "Scale-up 1 → N with peer TLS" through the controller, with the test as the sidecar:
// the config map is rendered for 3 https members, the StatefulSet is rolled at 1 replica with the peer TLS
// volumes and the Etcd reports lastOperation Requeue while the member lease says "false"; replicas go to 3
// only after it says "true", and the reconcile then succeeds and drops the annotation.
func TestPeerTLSScaleUpThroughController(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	createEtcd(t, ns, 1)
	waitReconciled(t, ns)
	// The member's sidecar renews its lease all along, as a running sidecar does: a single renewal ages
	// past the 2 s + 3 s thresholds while the test waits on a busy machine, the member turns NotReady and the
	// cluster counts as having lost its quorum.
	member0 := startSidecarsWithPeerTLS(t, ns, map[string]string{"etcd-main-0": "8e9e05c52164694d:cdf818194e3a8c32:Leader"}, "false")
	createSecret(t, ns, "ca-etcd-peer", "bundle.crt")
	createSecret(t, ns, "etcd-peer-server", "tls.crt", "tls.key")

	updateEtcd(t, ns, func(e *druidv1alpha1.Etcd) {
		e.Spec.Replicas = 3
		withPeerTLS(e)
		e.Annotations = map[string]string{druidv1alpha1.GardenerOperationAnnotation: druidv1alpha1.OperationReconcile}
	})

	g.Eventually(func(g Gomega) {
		etcd := getEtcd(g, ns)
		g.Expect(etcd.Status.LastOperation.State).To(Equal(druidv1alpha1.LastOperationStateRequeue))
		g.Expect(etcd.Status.LastOperation.Description).To(ContainSubstring("peer TLS"))
		g.Expect(etcd.Status.LastErrors).To(BeEmpty(), "a held-back scale-up is not an error")
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	cm := &corev1.ConfigMap{}
	g.Expect(exists(ns, "etcd-main-config", cm)()).To(Succeed())
	g.Expect(strings.Count(cm.Data["etcd.conf.yaml"], "=https://")).To(Equal(3), "the config map is synced before the StatefulSet")
	sts := statefulSet(g, ns)
	g.Expect(sts.Spec.Replicas).To(Equal(ptr.To(int32(1))))
	g.Expect(sts.Spec.Template.Spec.Volumes).To(ContainElement(HaveField("Secret.SecretName", "etcd-peer-server")))

	// While the member has not switched, the StatefulSet stays at 1 replica and the annotation stays.
	g.Consistently(func(g Gomega) {
		g.Expect(statefulSet(g, ns).Spec.Replicas).To(Equal(ptr.To(int32(1))))
		etcd := getEtcd(g, ns)
		g.Expect(etcd.Annotations).To(HaveKey(druidv1alpha1.GardenerOperationAnnotation))
		g.Expect(etcd.Status.ObservedGeneration).To(Equal(ptr.To(int64(1))))
	}).WithTimeout(3 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())

	// The sidecar restarted etcd with the https peer URL and flips the annotation.
	member0.setPeerTLS("true")
	g.Eventually(func(g Gomega) *int32 { return statefulSet(g, ns).Spec.Replicas }).
		WithTimeout(timeout).WithPolling(poll).Should(Equal(ptr.To(int32(3))))
	etcd := waitReconciled(t, ns)
	g.Expect(etcd.Annotations).NotTo(HaveKey(druidv1alpha1.GardenerOperationAnnotation))
	for _, name := range []string{"etcd-main-1", "etcd-main-2"} {
		lease := &coordinationv1.Lease{}
		g.Expect(exists(ns, name, lease)()).To(Succeed(), name)
		g.Expect(lease.Spec.RenewTime).To(BeNil(), "new member leases are created empty for their sidecars")
	}
	// The new members are not bootstrapped yet; the cluster is still the single quorate member.
	etcd = expectCondition(t, ns, druidv1alpha1.ConditionTypeReady, druidv1alpha1.ConditionTrue, druidv1alpha1.ReasonQuorate)
	g.Eventually(func(g Gomega) *int32 { return recordedClusterSize(g, ns) }).WithTimeout(timeout).WithPolling(poll).Should(Equal(ptr.To(int32(1))))
	g.Expect(etcd.Status.PeerUrlTLSEnabled).To(Equal(ptr.To(false)), "the new members have not reported peer TLS yet")
}
