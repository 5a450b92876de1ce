//go:build e2e

package e2e

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"k8s.io/utils/ptr"

	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/druid"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/seedworkflow"
)

// Scenario: the released upstream components, built from their Go modules (`make tools-upstream`) and
// packed as upstream packs them, run beside ours on the local seed, both ways round:
//   - upstream etcd-druid v0.38.1, deployed from its own chart (RBAC, OperatorConfiguration, CRDs), with an
//     image vector (IMAGEVECTOR_OVERWRITE, as gardenlet configures it) naming our etcd-wrapper and etcdbrctl;
//   - our etcd-druid, as the suite deploys it, with upstream's etcd-backup-restore v0.40.0 as its
//     backup-restore image (told by --upstream-image-repositories which image is upstream's).
//
// Each bootstraps a 3-member etcd-main backed up to the seed's S3, takes full and delta snapshots under a
// writer, and restores it after every member lost its data by upstream's documented procedure for a
// permanent quorum loss (restoreByUpstreamProcedure): neither pairing has an automatic recovery — upstream
// druid has none, and our druid's runs Jobs only our etcdbrctl has. The writer stops and a snapshot holding
// its last write is in the store before the data goes: every acknowledged write must come back. Beside
// upstream's sidecar our druid holds our wrapper at etcd 3.5 (--hold-etcd-version): upstream's restorer
// opens only what etcd 3.5 and older write, so the members must run 3.5 from the first start on; under
// upstream druid our wrapper runs its own etcd 3.7, restored by our sidecar.
var _ = Describe("upstream binaries", func() {
	Context("upstream etcd-druid v0.38.1 running our etcd-wrapper and etcdbrctl images", Ordered, func() {
		var env *seedworkflow.Env
		BeforeAll(func(ctx SpecContext) {
			images := requireUpstreamImages()
			measure("switch the seed from our druid to upstream etcd-druid v0.38.1", func() {
				stopOurDruid(ctx)
				deployUpstreamDruid(ctx, images[upstreamDruidImage], seed.Images())
			})
			// Registered after the druid swap, so it runs first: upstream druid removes its Etcd's finalizer.
			env = newShoot(ctx, "updruid", fastDeltaSnapshots)
		}, NodeTimeout(15*time.Minute))

		bootstrapBackupRestore(func() *seedworkflow.Env { return env }, "/e2e/updruid/", "etcdbrctl", "3.7")
	})

	Context("our etcd-druid running upstream's etcd-backup-restore v0.40.0 image", Ordered, func() {
		var env *seedworkflow.Env
		BeforeAll(func(ctx SpecContext) {
			images := requireUpstreamImages()
			measure("redeploy our druid with upstream's etcd-backup-restore image", func() {
				_, err := seedworkflow.BootstrapDruidWith(ctx, base, func(v *druid.Values) {
					v.BackupRestoreImage = images[upstreamBackupRestoreImage]
					v.ChartValues = map[string]any{"images": map[string]any{"upstreamRepositories": upstreamRepositoriesPattern()}}
				})
				Expect(err).NotTo(HaveOccurred())
			})
			DeferCleanup(func(ctx SpecContext) {
				_, err := seedworkflow.BootstrapDruid(ctx, base)
				Expect(err).NotTo(HaveOccurred())
			}, NodeTimeout(10*time.Minute))
			env = newShoot(ctx, "upbr", fastDeltaSnapshots)
		}, NodeTimeout(15*time.Minute))

		// Upstream's etcd-backup-restore v0.40.0 restores through etcd 3.4's mvcc package, which panics on
		// any storage version but 3.4 and 3.5 ("unsupported storage version"): the members run etcd 3.5.
		bootstrapBackupRestore(func() *seedworkflow.Env { return env }, "/e2e/upbr/", upstreamBackupRestoreImage, "3.5")
	})
})

// bootstrapBackupRestore adds the specs both pairings share to the current Ordered container: a 3-member
// etcd-main Ready (deployed through botanist, as gardenlet writes it) whose sidecars run the seed's image
// sidecarImage, full and delta snapshots in the store under a writer, and the restore after all members lost
// their data, every member running etcd of the minor version etcdMinor before and after.
func bootstrapBackupRestore(env func() *seedworkflow.Env, prefix, sidecarImage, etcdMinor string) {
	var writer *seedworkflow.Writer
	It("bootstraps a 3-member etcd-main Ready", func(ctx SpecContext) {
		measure("bootstrap 3 members", func() {
			values := etcd.Values{Role: etcd.RoleMain, Replicas: ptr.To(int32(3)), HighAvailability: true,
				BackupConfig: &etcd.BackupConfig{BackupEntryName: env().BackupEntryName}, DeltaSnapshotPeriod: env().DeltaSnapshotPeriod,
				WaitTimeout: env().Timeout, WaitInterval: env().Interval}
			c := etcd.New(env().Client, env().Namespace, values)
			Expect(c.Deploy(ctx)).To(Succeed())
			Expect(c.Wait(ctx)).To(Succeed())
			expectReadyWithPeerTLS(ctx, env(), 3)
		})
		Expect(sidecarImages(ctx, env())).To(HaveEach(Equal(seed.Images()[sidecarImage])))
		Expect(memberVersions(ctx, env())).To(HaveEach(HavePrefix(etcdMinor+".")), "the members' etcd versions")
		writer = seedworkflow.StartWriter(ctx, env(), etcd.RoleMain, prefix)
	})

	It("takes full and delta snapshots into the seed's store", func(ctx SpecContext) {
		Eventually(writer.AckedCount).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(BeNumerically(">=", 100))
		measure("first full and delta snapshot in the store", func() {
			Eventually(func(g Gomega) {
				snaps := storedSnapshots(ctx, env())
				g.Expect(snaps).To(ContainElement(HaveField("Kind", "Full")))
				g.Expect(snaps).To(ContainElement(HaveField("Kind", "Incr")))
			}).WithContext(ctx).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(Succeed())
		})
		for _, s := range storedSnapshots(ctx, env()) {
			fmt.Fprintf(GinkgoWriter, "STORED %s\n", s.Key)
		}
	})

	It("restores every acknowledged write after all three members lost their data", func(ctx SpecContext) {
		acked, failures, longestGap := writer.Stop()
		AddReportEntry("writes before the data loss", fmt.Sprintf("%d acknowledged, %d failed, longest gap %s", len(acked), failures, longestGap))
		fmt.Fprintf(GinkgoWriter, "writes before the data loss: %d acknowledged, %d failed attempts, longest gap %s\n", len(acked), failures, longestGap)
		Expect(acked).NotTo(BeEmpty())
		revision := clusterRevision(ctx, env())
		measure("a snapshot holding the last acknowledged write", func() {
			Eventually(func() int64 { return storedRevision(ctx, env()) }).
				WithContext(ctx).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(BeNumerically(">=", revision))
		})
		measure("total data loss → restored from the backup (upstream's procedure)", func() {
			restoreByUpstreamProcedure(ctx, env())
		})
		present := expectKeysOnEveryMember(ctx, env(), etcd.RoleMain, prefix, 3, acked)
		Expect(memberVersions(ctx, env())).To(HaveEach(HavePrefix(etcdMinor+".")), "the members' etcd versions after the restore")
		AddReportEntry("writes after the restore", fmt.Sprintf("%d acknowledged, %d present on every member", len(acked), present))
		fmt.Fprintf(GinkgoWriter, "after the restore: %d acknowledged writes, %d keys on every member, 0 lost\n", len(acked), present)
	})
}
