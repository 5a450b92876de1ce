//go:build e2e

package e2e

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/seedworkflow"
)

// Scenario 6: the backup store goes away. druid reports BackupReady=False once no snapshot was stored for
// three delta periods, while clients keep writing to etcd; when the store is back, the sidecar uploads
// again and BackupReady turns True. No acknowledged write is lost.
var _ = Describe("backup store outage", func() {
	It("reports BackupReady=False while the store is unreachable and keeps serving clients", func(ctx SpecContext) {
		env := newShoot(ctx, "backup-outage", fastDeltaSnapshots)
		deployMain(ctx, env, 1)
		expectCondition(ctx, env, etcd.RoleMain, druidv1alpha1.ConditionTypeBackupReady, druidv1alpha1.ConditionTrue, "")

		w := seedworkflow.StartWriter(ctx, env, etcd.RoleMain, "/e2e/backup-outage/")
		By("stopping the seed's S3 server")
		Expect(seed.StopS3()).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { Expect(seed.StartS3(ctx)).To(Succeed()) })
		var acksDuringOutage int
		measure("store unreachable → BackupReady=False", func() {
			before := w.AckedCount()
			expectCondition(ctx, env, etcd.RoleMain, druidv1alpha1.ConditionTypeBackupReady, druidv1alpha1.ConditionFalse, druidv1alpha1.ReasonBackupFailed)
			// Clients are still served: more writes are acknowledged while the store stays away.
			target := w.AckedCount() + 50
			Eventually(w.AckedCount).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(BeNumerically(">=", target))
			acksDuringOutage = w.AckedCount() - before
		})
		expectCondition(ctx, env, etcd.RoleMain, druidv1alpha1.ConditionTypeReady, druidv1alpha1.ConditionTrue, "")

		By("starting the S3 server again")
		Expect(seed.StartS3(ctx)).To(Succeed())
		measure("store back → BackupReady=True", func() {
			expectCondition(ctx, env, etcd.RoleMain, druidv1alpha1.ConditionTypeBackupReady, druidv1alpha1.ConditionTrue, "")
		})
		acked, failures, gap := w.Stop()
		AddReportEntry("backup outage writes", fmt.Sprintf("%d acknowledged during the outage, %d in total, %d failed, longest gap %s",
			acksDuringOutage, len(acked), failures, gap))
		expectKeysOnEveryMember(ctx, env, etcd.RoleMain, "/e2e/backup-outage/", 1, acked)
	})
})
