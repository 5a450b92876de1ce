//go:build e2e

package e2e

import (
	"fmt"
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/seedworkflow"
)

// Scenario 3: a member whose pod is deleted comes back with its data; a member whose volume is wiped and
// whose pod is killed rejoins as a new member (a learner, promoted once caught up) and ends up with the
// same keys as the others.
var _ = Describe("member healing", func() {
	It("brings back a deleted member pod and a member whose data was wiped", Label(recoveryLabel), func(ctx SpecContext) {
		env := newShoot(ctx, "healing", 0)
		deployMain(ctx, env, 3)
		_, err := seedworkflow.WriteData(ctx, env, etcd.RoleMain, 100)
		Expect(err).NotTo(HaveOccurred())
		obj := getEtcd(ctx, env, etcd.RoleMain)

		By("deleting the pod of member 1")
		recoveryUnderWriter(ctx, env, "member pod deleted", "member pod deleted → Ready", "/e2e/healing-pod/", 3, func() {
			uid := deletePod(ctx, env, druidv1alpha1.PodName(obj, 1))
			By("waiting for the replacement of the pod of member 1 to be Ready")
			waitReplaced(ctx, env, druidv1alpha1.PodName(obj, 1), uid)
			By("waiting for druid to report 3 ready members")
			Expect(seedworkflow.WaitMembers(ctx, env, etcd.RoleMain, 3, true)).To(Succeed())
		})
		expectKeysOnEveryMember(ctx, env, etcd.RoleMain, seedworkflow.DemoKeyPrefix, 3, nil)

		By("wiping the volume of member 2 and killing its pod")
		oldID := memberID(getEtcd(ctx, env, etcd.RoleMain), druidv1alpha1.PodName(obj, 2))
		Expect(oldID).NotTo(BeEmpty())
		recoveryUnderWriter(ctx, env, "member volume wiped", "member data wiped → rejoined and promoted", "/e2e/healing-wiped/", 3, func() {
			wipeMemberData(ctx, env, etcd.RoleMain, 2)
			uid := deletePod(ctx, env, druidv1alpha1.PodName(obj, 2))
			waitReplaced(ctx, env, druidv1alpha1.PodName(obj, 2), uid)
			// The rejoined member has a new etcd member ID (the old identity was removed, a learner added).
			Eventually(func() string { return memberID(getEtcd(ctx, env, etcd.RoleMain), druidv1alpha1.PodName(obj, 2)) }).
				WithTimeout(waitTimeout).WithPolling(pollInterval).ShouldNot(Or(BeEmpty(), Equal(oldID)))
			Expect(seedworkflow.WaitMembers(ctx, env, etcd.RoleMain, 3, true)).To(Succeed())
			// Promoted: no learner is left in etcd's member list.
			Eventually(func(g Gomega) {
				members := memberList(ctx, env, etcd.RoleMain)
				g.Expect(members.Members).To(HaveLen(3))
				for _, m := range members.Members {
					g.Expect(m.IsLearner).To(BeFalse(), "member %s (%x) is still a learner", m.Name, m.ID)
				}
			}).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(Succeed())
		})
		members := memberList(ctx, env, etcd.RoleMain)
		ids := []string{}
		for _, m := range members.Members {
			ids = append(ids, strconv.FormatUint(m.ID, 16))
		}
		Expect(ids).NotTo(ContainElement(oldID), "the wiped member's old identity is still in the cluster")
		count := expectKeysOnEveryMember(ctx, env, etcd.RoleMain, seedworkflow.DemoKeyPrefix, 3, nil)
		Expect(count).To(Equal(100))
		fmt.Fprintf(GinkgoWriter, "member 2: %s → %s\n", oldID, memberID(getEtcd(ctx, env, etcd.RoleMain), druidv1alpha1.PodName(obj, 2)))
	})
})

// memberID is the ID druid reports for the member pod name, "" when it reports none.
func memberID(obj *druidv1alpha1.Etcd, name string) string {
	for _, m := range obj.Status.Members {
		if m.Name == name && m.ID != nil {
			return *m.ID
		}
	}
	return ""
}
