//go:build e2e

package e2e

import (
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
)

// Scenario 1: an HA etcd-main created with three members bootstraps one cluster: every member in the
// status with its ID, exactly one Leader, and etcd's own member list agrees.
var _ = Describe("bootstrap", func() {
	It("bootstraps three members from scratch", func(ctx SpecContext) {
		env := newShoot(ctx, "bootstrap", 0)
		measure("bootstrap 3 members", func() { deployMain(ctx, env, 3) })

		obj := getEtcd(ctx, env, etcd.RoleMain)
		Expect(druidv1alpha1.FindCondition(obj.Status.Conditions, druidv1alpha1.ConditionTypeReady).Status).To(Equal(druidv1alpha1.ConditionTrue))
		Expect(druidv1alpha1.FindCondition(obj.Status.Conditions, druidv1alpha1.ConditionTypeAllMembersReady).Status).To(Equal(druidv1alpha1.ConditionTrue))
		Expect(obj.Status.Members).To(HaveLen(3))
		roles := map[druidv1alpha1.EtcdRole]int{}
		statusIDs := map[string]bool{}
		for _, m := range obj.Status.Members {
			Expect(m.ID).NotTo(BeNil(), "member %s has no ID", m.Name)
			Expect(m.Role).NotTo(BeNil(), "member %s has no role", m.Name)
			roles[*m.Role]++
			statusIDs[*m.ID] = true
		}
		Expect(roles).To(Equal(map[druidv1alpha1.EtcdRole]int{druidv1alpha1.EtcdRoleLeader: 1, druidv1alpha1.EtcdRoleMember: 2}))

		members := memberList(ctx, env, etcd.RoleMain)
		Expect(members.Members).To(HaveLen(3))
		for _, m := range members.Members {
			Expect(m.IsLearner).To(BeFalse(), "member %s is still a learner", m.Name)
			Expect(statusIDs).To(HaveKey(strconv.FormatUint(m.ID, 16)), "etcd member %s is not in the Etcd status", m.Name)
		}
	})
})
