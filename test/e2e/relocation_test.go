//go:build e2e

package e2e

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/heal/decide"
	"github.com/gardener-etcd/gardener-etcd/pkg/seedworkflow"
)

// relocationTimeout: the lost member is NotReady past druid's grace period 1 + 5 min after its node stops
// (defaults), then the new member needs its claim, its pod and its catch-up as a learner.
const relocationTimeout = 12 * time.Minute

// The heal decision table's case 14: the node of one of three members is lost (its kubelet, containerd and
// the pods' containers stop, and its Node object is deleted, as a cloud controller does for a machine that
// is gone). The member's volume is bound to that node, so its new pod stays unschedulable; druid deletes
// the member's claim and pod, the StatefulSet creates both on the seed's fourth node, and the new member
// rejoins as a learner. Three members are Ready again, and no acknowledged write of the writer is lost.
var _ = Describe("member relocation", func() {
	It("replaces a member whose node is lost on another node, with every acknowledged write", Label(recoveryLabel), func(ctx SpecContext) {
		env := newShoot(ctx, "relocation", 0)
		Expect(len(env.Seed.NodeNames())).To(BeNumerically(">=", 4), "the members' hostname spread (minDomains 3) needs a fourth node for the replacement")
		deployMain(ctx, env, 3)
		obj := getEtcd(ctx, env, etcd.RoleMain)
		lostPod := druidv1alpha1.PodName(obj, 2)
		lostNode := memberPod(ctx, env, lostPod).Spec.NodeName
		Expect(lostNode).NotTo(BeEmpty())
		oldID := memberID(obj, lostPod)

		w := seedworkflow.StartWriter(ctx, env, etcd.RoleMain, "/e2e/relocation/")
		By(fmt.Sprintf("stopping node %s of member 2 and deleting its Node object", lostNode))
		took := measure("member node lost → member relocated and Ready", func() {
			Expect(env.Seed.StopNode(ctx, lostNode)).To(Succeed())
			Expect(env.Client.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: lostNode}})).To(Succeed())
			expectConditionWithin(ctx, env, relocationTimeout, etcd.RoleMain, decide.ConditionTypeMemberRelocation, druidv1alpha1.ConditionTrue, decide.ReasonMemberRelocating)
			expectConditionWithin(ctx, env, waitTimeout, etcd.RoleMain, decide.ConditionTypeMemberRelocation, druidv1alpha1.ConditionFalse, decide.ReasonMemberRelocated)
			Expect(seedworkflow.WaitMembers(ctx, env, etcd.RoleMain, 3, true)).To(Succeed())
		})
		pod := memberPod(ctx, env, lostPod)
		Expect(pod.Spec.NodeName).NotTo(Equal(lostNode))
		Expect(memberID(getEtcd(ctx, env, etcd.RoleMain), lostPod)).NotTo(Or(BeEmpty(), Equal(oldID)), "the replacement is a new member")
		Eventually(func(g Gomega) {
			members := memberList(ctx, env, etcd.RoleMain)
			g.Expect(members.Members).To(HaveLen(3))
			for _, m := range members.Members {
				g.Expect(m.IsLearner).To(BeFalse(), "member %s (%x) is still a learner", m.Name, m.ID)
			}
		}).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(Succeed())

		acksAfter := w.AckedCount() + 20
		Eventually(w.AckedCount).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(BeNumerically(">=", acksAfter))
		acked, failures, gap := w.Stop()
		AddReportEntry("relocation writes", fmt.Sprintf("%d acknowledged, %d failed, longest gap %s", len(acked), failures, gap))
		fmt.Fprintf(GinkgoWriter, "DURATION longest write gap during the member relocation: %s\n", gap)
		recordRecovery("member node gone", took, len(acked), lostWrites(ctx, env, etcd.RoleMain, "/e2e/relocation/", acked))
		expectKeysOnEveryMember(ctx, env, etcd.RoleMain, "/e2e/relocation/", 3, acked)
		events := &corev1.EventList{}
		Expect(env.Client.List(ctx, events, client.InNamespace(env.Namespace))).To(Succeed())
		Expect(events.Items).To(ContainElement(HaveField("Reason", decide.ReasonMemberRelocating)), "a MemberRelocating event")
	})
})
