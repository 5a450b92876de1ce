//go:build e2e

package e2e

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/seedworkflow"
)

// The longest time without an acknowledged write is reported, not asserted: a loaded machine stretches
// it. What the scenarios assert is behaviour: the writes go on after the scale (a cluster that lost its
// quorum for good acknowledges none), every acknowledged write is on every member, and for 3 → 1 the
// survivor leads its one-member cluster.

// Scenario 7: five members scale down to three while a client writes; the cluster keeps its quorum (the
// writes go on) and its data, and etcd's member list shrinks with the StatefulSet.
var _ = Describe("scale-down", func() {
	It("scales 5 → 3 keeping quorum and data", func(ctx SpecContext) {
		env := newShoot(ctx, "scaledown", 0)
		measure("bootstrap 5 members", func() { deployMain(ctx, env, 5) })
		_, err := seedworkflow.WriteData(ctx, env, etcd.RoleMain, 100)
		Expect(err).NotTo(HaveOccurred())

		w := seedworkflow.StartWriter(ctx, env, etcd.RoleMain, "/e2e/scaledown/")
		measure("scale-down 5 → 3", func() {
			_, err := seedworkflow.ScaleMain(ctx, env, 3)
			Expect(err).NotTo(HaveOccurred())
			Eventually(func() int { return len(memberList(ctx, env, etcd.RoleMain).Members) }).
				WithTimeout(waitTimeout).WithPolling(pollInterval).Should(Equal(3))
		})
		acksAfter := w.AckedCount() + 20
		Eventually(w.AckedCount).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(BeNumerically(">=", acksAfter))
		acked, failures, gap := w.Stop()
		AddReportEntry("scale-down writes", fmt.Sprintf("%d acknowledged, %d failed, longest gap %s", len(acked), failures, gap))
		fmt.Fprintf(GinkgoWriter, "DURATION longest write gap during scale-down 5 → 3: %s\n", gap)

		expectKeysOnEveryMember(ctx, env, etcd.RoleMain, "/e2e/scaledown/", 3, acked)
		_, err = seedworkflow.CheckData(ctx, env, etcd.RoleMain, 100)
		Expect(err).NotTo(HaveOccurred())
	})

	// 3 → 1 under writes. Druid holds the StatefulSet at 3 until the backup leader removed members
	// 2 and 1 while their pods ran (quorum held throughout), so the survivor leads a one-member cluster
	// with every acknowledged write, instead of being left leaderless in a three-member membership.
	It("scales 3 → 1 removing the members while quorum holds", Label(recoveryLabel), func(ctx SpecContext) {
		env := newShoot(ctx, "scalein", 0)
		measure("bootstrap 3 members", func() { deployMain(ctx, env, 3) })
		_, err := seedworkflow.WriteData(ctx, env, etcd.RoleMain, 100)
		Expect(err).NotTo(HaveOccurred())

		w := seedworkflow.StartWriter(ctx, env, etcd.RoleMain, "/e2e/scalein/")
		took := measure("scale-in 3 → 1", func() {
			_, err := seedworkflow.ScaleMain(ctx, env, 1)
			Expect(err).NotTo(HaveOccurred())
			Eventually(func() int { return len(memberList(ctx, env, etcd.RoleMain).Members) }).
				WithTimeout(waitTimeout).WithPolling(pollInterval).Should(Equal(1))
		})
		expectCondition(ctx, env, etcd.RoleMain, druidv1alpha1.ConditionTypeReady, druidv1alpha1.ConditionTrue, "")
		expectSurvivorLeads(ctx, env)
		acksAfter := w.AckedCount() + 20
		Eventually(w.AckedCount).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(BeNumerically(">=", acksAfter))
		acked, failures, gap := w.Stop()
		AddReportEntry("scale-in writes", fmt.Sprintf("%d acknowledged, %d failed, longest gap %s", len(acked), failures, gap))
		fmt.Fprintf(GinkgoWriter, "DURATION longest write gap during scale-in 3 → 1: %s\n", gap)
		recordRecovery("3 → 1", took, len(acked), lostWrites(ctx, env, etcd.RoleMain, "/e2e/scalein/", acked))

		expectKeysOnEveryMember(ctx, env, etcd.RoleMain, "/e2e/scalein/", 1, acked)
		_, err = seedworkflow.CheckData(ctx, env, etcd.RoleMain, 100)
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() *int32 { return recordedClusterSize(ctx, env, etcd.RoleMain) }).
			WithTimeout(waitTimeout).WithPolling(pollInterval).Should(HaveValue(Equal(int32(1))))
	})
})

// expectSurvivorLeads checks that the one member left is its cluster's leader (a member left in a larger
// membership without quorum would answer its status with no leader).
func expectSurvivorLeads(ctx context.Context, env *seedworkflow.Env) {
	cli, err := seedworkflow.EtcdClient(ctx, env, etcd.RoleMain)
	Expect(err).NotTo(HaveOccurred())
	defer cli.Close()
	Eventually(func(g Gomega) {
		st, err := cli.Status(ctx, cli.Endpoints()[0])
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(st.Leader).NotTo(BeZero(), "no leader")
		g.Expect(st.Leader).To(Equal(st.Header.MemberId), "the survivor does not lead")
	}).WithContext(ctx).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(Succeed())
}
