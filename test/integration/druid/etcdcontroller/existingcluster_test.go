package etcdcontroller_test

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/health"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
)

// TestEtcdJoiningAnExistingCluster: druid renders an Etcd created with spec.etcd.bootstrapWithExistingCluster
// as upstream etcd-druid does (the source members after its own in initial-cluster, the source's client
// endpoints after the client Service in the sidecar's --service-endpoints), reports the join in progress
// while members are missing, and once all members report Ready records the source members in
// status.bootstrapWithExistingCluster, keeping the record when a member fails later.
func TestEtcdJoiningAnExistingCluster(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	source := &druidv1alpha1.BootstrapWithExistingCluster{
		Members:         []druidv1alpha1.BootstrapExistingMember{{Name: "etcd-old-0", PeerURLs: []string{"http://etcd-old-0.etcd-old-peer." + ns + ".svc:2380"}}},
		ClientEndpoints: []string{"http://etcd-old-client." + ns + ".svc:2379"},
	}
	createEtcd(t, ns, 2, func(e *druidv1alpha1.Etcd) { e.Spec.Etcd.BootstrapWithExistingCluster = source })
	waitReconciled(t, ns)

	cm := &corev1.ConfigMap{}
	g.Expect(exists(ns, etcdName+"-config", cm)()).To(Succeed())
	g.Expect(cm.Data[etcdpod.ConfigFileName]).To(ContainSubstring(
		"initial-cluster: etcd-main-0=http://etcd-main-0.etcd-main-peer." + ns + ".svc:2380,etcd-main-1=http://etcd-main-1.etcd-main-peer." + ns +
			".svc:2380,etcd-old-0=http://etcd-old-0.etcd-old-peer." + ns + ".svc:2380\n"))
	sts := statefulSet(g, ns)
	var sidecarArgs []string
	for _, c := range sts.Spec.Template.Spec.Containers {
		if c.Name == "backup-restore" {
			sidecarArgs = c.Args
		}
	}
	g.Expect(sidecarArgs).To(ContainElement("--service-endpoints=http://etcd-main-client." + ns + ".svc:2379,http://etcd-old-client." + ns + ".svc:2379"))

	for i := 0; i < 2; i++ {
		createPod(t, ns, i, true)
	}
	setStatefulSetRolledOut(t, ns, 2)
	s := startSidecars(t, ns, map[string]string{"etcd-main-0": "8e9e05c52164694d:cdf818194e3a8c32:Member"})
	etcd := expectCondition(t, ns, druidv1alpha1.ConditionTypeBootstrappedWithExistingCluster, druidv1alpha1.ConditionFalse, health.ReasonBootstrapInProgress)
	g.Expect(etcd.Status.BootstrapWithExistingCluster).To(BeNil())

	s.set("etcd-main-1", "91bc3c398fb3c146:cdf818194e3a8c32:Member")
	etcd = expectCondition(t, ns, druidv1alpha1.ConditionTypeBootstrappedWithExistingCluster, druidv1alpha1.ConditionTrue, health.ReasonBootstrapSucceeded)
	g.Expect(etcd.Status.BootstrapWithExistingCluster).NotTo(BeNil())
	g.Expect(etcd.Status.BootstrapWithExistingCluster.Members).To(Equal([]druidv1alpha1.BootstrapJoinedMember{
		{Name: "etcd-old-0", PeerURLs: source.Members[0].PeerURLs},
	}))
	joinedAt := etcd.Status.BootstrapWithExistingCluster.JoinedAt

	s.stop("etcd-main-1")
	expectMember(t, ns, "etcd-main-1", druidv1alpha1.EtcdMemberStatusNotReady, druidv1alpha1.MemberReasonUnknownGracePeriodExceeded)
	etcd = expectCondition(t, ns, druidv1alpha1.ConditionTypeBootstrappedWithExistingCluster, druidv1alpha1.ConditionTrue, health.ReasonBootstrapSucceeded)
	g.Expect(etcd.Status.BootstrapWithExistingCluster.JoinedAt.Equal(&joinedAt)).To(BeTrue(), "recorded once")
}
