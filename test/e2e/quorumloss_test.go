//go:build e2e

package e2e

import (
	"fmt"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/demo"
	etcdcontroller "github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/etcd"
)

// Druid starts a quorum-loss recovery once the lost members have been NotReady past its grace period: their
// leases must be older than the Unknown and NotReady thresholds (1 + 5 min by default), so the recovery
// begins about six and a half minutes after the loss.
const recoveryTimeout = 12 * time.Minute

// Scenario 4 (seed 002 case 10): two of three members lose their data at once. druid's quorum-loss
// recovery scales the cluster to zero and back, the members restore from the backup, and every write that
// the last delta snapshot covered is there again. With a short delta period BackupReady turns False long
// before druid acts (a cluster without quorum takes no snapshots): the recovery must start anyway, because
// the backup was current when the cluster lost its quorum.
var _ = Describe("quorum loss", func() {
	It("recovers from the backup when two of three members lose their data", func(ctx SpecContext) {
		env := newShoot(ctx, "quorum", fastDeltaSnapshots)
		deployMain(ctx, env, 3)
		const keys = 100
		_, err := demo.WriteData(ctx, env, etcd.RoleMain, keys)
		Expect(err).NotTo(HaveOccurred())
		obj := getEtcd(ctx, env, etcd.RoleMain)

		By(fmt.Sprintf("waiting until a delta snapshot covers revision %d", env.WrittenRevision))
		Eventually(func(g Gomega) int64 {
			lease := &coordinationv1.Lease{}
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: env.Namespace, Name: obj.DeltaSnapshotLeaseName()}, lease)).To(Succeed())
			rev, err := strconv.ParseInt(ptr.Deref(lease.Spec.HolderIdentity, ""), 10, 64)
			g.Expect(err).NotTo(HaveOccurred(), "holderIdentity of %s", lease.Name)
			return rev
		}).WithContext(ctx).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(BeNumerically(">=", env.WrittenRevision))

		By("wiping the volumes of members 1 and 2 and killing their pods")
		measure("quorum loss → recovered from the backup", func() {
			for _, ordinal := range []int{1, 2} {
				wipeMemberData(ctx, env, etcd.RoleMain, ordinal)
			}
			for _, ordinal := range []int{1, 2} {
				deletePod(ctx, env, obj.PodName(ordinal))
			}
			stale := expectCondition(ctx, env, etcd.RoleMain, druidv1alpha1.ConditionTypeBackupReady, druidv1alpha1.ConditionFalse, "")
			By("BackupReady turned False without quorum: " + stale.Message)
			expectConditionWithin(ctx, env, recoveryTimeout, etcd.RoleMain, etcdcontroller.ConditionTypeQuorumLossRecovery,
				druidv1alpha1.ConditionFalse, etcdcontroller.ReasonRecoveryCompleted)
			Expect(demo.WaitMembers(ctx, env, etcd.RoleMain, 3, true)).To(Succeed())
			expectCondition(ctx, env, etcd.RoleMain, druidv1alpha1.ConditionTypeReady, druidv1alpha1.ConditionTrue, "")
		})
		present := expectKeysOnEveryMember(ctx, env, etcd.RoleMain, demo.DemoKeyPrefix, 3, nil)
		AddReportEntry("quorum loss data", fmt.Sprintf("%d acknowledged, %d present after the recovery", keys, present))
		Expect(present).To(Equal(keys), "keys acknowledged before the last delta snapshot")
	})
})
