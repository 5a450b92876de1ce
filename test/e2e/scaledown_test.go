//go:build e2e

package e2e

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/seedworkflow"
)

// maxWriteGapDuringScaleDown bounds the time without an acknowledged write while two of five members
// leave: the cluster keeps its quorum throughout, so only a leader election may pause the writes.
const maxWriteGapDuringScaleDown = 30 * time.Second

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
		Expect(gap).To(BeNumerically("<", maxWriteGapDuringScaleDown), "writes stalled: the cluster lost its quorum")

		expectKeysOnEveryMember(ctx, env, etcd.RoleMain, "/e2e/scaledown/", 3, acked)
		_, err = seedworkflow.CheckData(ctx, env, etcd.RoleMain, 100)
		Expect(err).NotTo(HaveOccurred())
	})
})
