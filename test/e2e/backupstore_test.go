//go:build e2e

package e2e

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/seedworkflow"
	"github.com/gardener-etcd/gardener-etcd/test/prometheusrules"
)

// Scenario 6: the backup store goes away. druid reports BackupReady=False once no snapshot was stored for
// three delta periods, while clients keep writing to etcd; when the store is back, the sidecar uploads
// again and BackupReady turns True. No acknowledged write is lost. Meanwhile druid's /metrics is scraped
// as Prometheus would, and promtool evaluates the chart's alerting rules on what it returned: the critical
// EtcdBackupNotReady fires after its 1m and clears when the store is back.
var _ = Describe("backup store outage", func() {
	It("reports BackupReady=False while the store is unreachable and keeps serving clients", func(ctx SpecContext) {
		env := newShoot(ctx, "backup-outage", fastDeltaSnapshots)
		deployMain(ctx, env, 1)
		expectCondition(ctx, env, etcd.RoleMain, druidv1alpha1.ConditionTypeBackupReady, druidv1alpha1.ConditionTrue, "")

		name := getEtcd(ctx, env, etcd.RoleMain).Name
		scrapes, stopScraping := scrapeDruid(ctx, env, env.Namespace)
		DeferCleanup(stopScraping)
		Eventually(scrapes.Steps).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(BeNumerically(">=", 2))
		healthyStep := scrapes.Step(time.Now()) - 1

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
		// The alert has a 1m `for:`; the store stays away until the series have been False for longer.
		firingStep := scrapes.Step(time.Now()) + 13
		measure("BackupReady=False → alert for: elapsed", func() {
			Eventually(scrapes.Steps).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(BeNumerically(">", firingStep+1))
		})
		expectCondition(ctx, env, etcd.RoleMain, druidv1alpha1.ConditionTypeReady, druidv1alpha1.ConditionTrue, "")

		By("starting the S3 server again")
		Expect(seed.StartS3(ctx)).To(Succeed())
		measure("store back → BackupReady=True", func() {
			expectCondition(ctx, env, etcd.RoleMain, druidv1alpha1.ConditionTypeBackupReady, druidv1alpha1.ConditionTrue, "")
		})
		clearedStep := scrapes.Step(time.Now()) + 1
		Eventually(scrapes.Steps).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(BeNumerically(">", clearedStep+1))
		stopScraping()
		firing := []map[string]string{{"severity": "critical", "namespace": env.Namespace, "name": name}}
		expectAlerts(scrapes, []prometheusrules.AlertCheck{
			{Step: healthyStep, Alert: "EtcdBackupNotReady"},
			{Step: firingStep, Alert: "EtcdBackupNotReady", Firing: firing},
			{Step: clearedStep, Alert: "EtcdBackupNotReady"},
		})
		AddReportEntry("backup outage alert", fmt.Sprintf("EtcdBackupNotReady firing at %s of the recording, cleared at %s (promtool on %d scrapes of druid's /metrics)",
			time.Duration(firingStep)*scrapeInterval, time.Duration(clearedStep)*scrapeInterval, scrapes.Steps()))
		acked, failures, gap := w.Stop()
		AddReportEntry("backup outage writes", fmt.Sprintf("%d acknowledged during the outage, %d in total, %d failed, longest gap %s",
			acksDuringOutage, len(acked), failures, gap))
		expectKeysOnEveryMember(ctx, env, etcd.RoleMain, "/e2e/backup-outage/", 1, acked)
	})
})
