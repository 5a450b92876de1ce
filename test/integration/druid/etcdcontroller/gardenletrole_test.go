package etcdcontroller_test

import (
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/heal"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/heal/decide"
	"github.com/gardener-etcd/gardener-etcd/test/support/gardenlet"
)

// TestQuorumLossUnderGardenletsRoleDeletesNothing: druid runs under gardenlet's ClusterRole, which grants
// no `delete persistentvolumeclaims`, and a 3-member cluster with a backup store loses its quorum (two
// members' leases stale and pods not ready). The recovery would scale to 0 and then fail at deleting the
// data volumes, leaving the cluster down: druid must not start it. The QuorumLossRecovery condition is
// False/PermissionsMissing naming the permission, a Warning event says so, and nothing is deleted or
// scaled — the claims, the StatefulSet's replicas, the member leases and pods stay as they were. Once the
// permission is granted, the running druid starts the recovery.
func TestQuorumLossUnderGardenletsRoleDeletesNothing(t *testing.T) {
	g := NewWithT(t)
	druidNS := restartDruidUnderGardenletsRole(t)

	ns := env.CreateNamespace(t)
	createSecret(t, ns, "etcd-backup", "accessKeyID", "secretAccessKey", "region")
	s := healthyCluster(t, ns, 3, withS3Store)
	leases, pods := map[string]types.UID{}, map[string]types.UID{}
	for _, name := range []string{"etcd-main-0", "etcd-main-1", "etcd-main-2"} {
		leases[name] = memberLease(g, ns, name).UID
		pods[name] = podUID(g, ns, name)
	}
	memberVolumes := []string{"etcd-main-etcd-main-0", "etcd-main-etcd-main-1", "etcd-main-etcd-main-2"}
	for _, name := range memberVolumes {
		createClaim(t, ns, name)
	}

	failMember(t, ns, s, 1)
	failMember(t, ns, s, 2)
	expectCondition(t, ns, druidv1alpha1.ConditionTypeReady, druidv1alpha1.ConditionFalse, druidv1alpha1.ReasonQuorumLost)
	etcd := expectCondition(t, ns, heal.ConditionTypeQuorumLossRecovery, druidv1alpha1.ConditionFalse, heal.ReasonRecoveryPermissionsMissing)
	g.Expect(druidv1alpha1.FindCondition(etcd.Status.Conditions, heal.ConditionTypeQuorumLossRecovery).Message).
		To(ContainSubstring("delete persistentvolumeclaims"))
	g.Eventually(func(g Gomega) []string {
		var messages []string
		for _, e := range warningEvents(g, ns, heal.EventReasonQuorumLossRecovery) {
			messages = append(messages, e.Message)
		}
		return messages
	}).WithTimeout(timeout).WithPolling(poll).Should(ContainElement(ContainSubstring("delete persistentvolumeclaims")), func() string {
		list := &corev1.EventList{}
		_ = env.Client.List(ctx, list, client.InNamespace(ns))
		var all []string
		for _, e := range list.Items {
			all = append(all, e.Type+"/"+e.Reason+"/"+e.InvolvedObject.Kind+": "+e.Message)
		}
		return strings.Join(all, "\n")
	})

	// Observed over several status periods (one second each here) after the refusal: still nothing done.
	g.Consistently(func(g Gomega) {
		sts := statefulSet(g, ns)
		g.Expect(sts.Spec.Replicas).To(Equal(ptr.To(int32(3))), "StatefulSet not scaled")
		g.Expect(sts.Annotations).NotTo(HaveKey(decide.QuorumLossRecoveryAnnotation), "no recovery started")
		for _, name := range memberVolumes {
			g.Expect(claim(g, ns, name).DeletionTimestamp).To(BeNil(), "claim %s not deleted", name)
		}
		for name, uid := range leases {
			g.Expect(memberLease(g, ns, name).UID).To(Equal(uid), "lease %s not recreated", name)
		}
		for name, uid := range pods {
			g.Expect(podUID(g, ns, name)).To(Equal(uid), "pod %s not deleted", name)
		}
		for _, e := range etcdEvents(g, ns, heal.EventReasonQuorumLossRecovery) {
			g.Expect(strings.Contains(e.Message, "scaled the StatefulSet")).To(BeFalse(), "no recovery step: %s", e.Message)
		}
	}).WithTimeout(5 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())
	g.Expect(getEtcd(g, ns).Status.LastOperation.State).To(Equal(druidv1alpha1.LastOperationStateError))

	// The operator grants the permission the condition names: the running druid asks again when it next
	// finds the quorum lost, and starts the recovery without a restart.
	grantPVCDeletion(t, druidNS)
	g.Eventually(func(g Gomega) {
		g.Expect(statefulSet(g, ns).Annotations).To(HaveKey(decide.QuorumLossRecoveryAnnotation), "recovery started")
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}

// grantPVCDeletion binds a ClusterRole allowing `delete persistentvolumeclaims` to the druid service
// account gardenlet's role runs as (the extra RBAC docs/gardenlet.md lists for the quorum-loss recovery).
// restartDruidUnderGardenletsRole restarts druid (until the test ends) as a service account of a new
// namespace bound to gardenlet's ClusterRole for etcd-druid, and returns that namespace.
func restartDruidUnderGardenletsRole(t *testing.T) string {
	t.Helper()
	druidNS := env.CreateNamespace(t)
	identity, err := gardenlet.DruidIdentity(ctx, env.Client, env.Config, druidNS)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	restartDruidAs(t, identity)
	return druidNS
}

func grantPVCDeletion(t *testing.T, druidNS string) {
	t.Helper()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "druid-pvc-deletion-" + druidNS},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"persistentvolumeclaims"}, Verbs: []string{"delete"}}}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: gardenlet.DruidServiceAccount, Namespace: druidNS}}}
	for _, obj := range []client.Object{role, binding} {
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = env.Client.Delete(ctx, obj) })
	}
}
