//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/heal"
	"github.com/gardener-etcd/gardener-etcd/pkg/seedworkflow"
)

// recoveryTimeout bounds the wait for the recovery. Druid acts once the members' sidecars confirm the loss
// (the wiped members report no member data, the leader no leader, for 20 s); the lease thresholds (1 + 5
// min by default) would start it about six and a half minutes after the loss, which the bound still
// allows, so that a run that fell back on them fails on its assertion of the confirmation, not a timeout.
const recoveryTimeout = 12 * time.Minute

// quorumLossDeltaSnapshots is this scenario's delta period: long enough that the writes made just before
// the loss are still only in the backup leader's buffer (its sidecar stores them when the cluster loses
// its leader), so that the recovery must bring back writes no delta snapshot held yet.
const quorumLossDeltaSnapshots = time.Minute

// Scenario 4 (the heal decision table's case 10): both followers lose their data at once while a writer
// runs. The wiped members' sidecars report that they hold no member data and see no leader, the leader's
// that it has none; once that held for the confirmation window druid's quorum-loss recovery scales the
// cluster to zero, reads every member volume (the leader's holds the writes, the wiped ones report empty)
// and uploads the leader's if the backup is behind it, then deletes the volumes and scales back; the
// members restore from the backup, and every acknowledged write is there again.
var _ = Describe("quorum loss", func() {
	It("recovers from the backup, with every acknowledged write, when two of three members lose their data", Label(recoveryLabel), func(ctx SpecContext) {
		env := newShoot(ctx, "quorum", quorumLossDeltaSnapshots)
		deployMain(ctx, env, 3)
		leader := leaderOrdinal(ctx, env, etcd.RoleMain)
		const keys = 100
		_, err := seedworkflow.WriteData(ctx, env, etcd.RoleMain, keys)
		Expect(err).NotTo(HaveOccurred())
		obj := getEtcd(ctx, env, etcd.RoleMain)
		var followers []int
		for ordinal := range 3 {
			if ordinal != leader {
				followers = append(followers, ordinal)
			}
		}

		By(fmt.Sprintf("wiping the volumes of the followers %v and killing their pods under a writer; the leader %d buffers the writes", followers, leader))
		recoveryUnderWriter(ctx, env, "quorum loss", "quorum loss → recovered from the backup", "/e2e/quorum/", 3, func() {
			for _, ordinal := range followers {
				wipeMemberData(ctx, env, etcd.RoleMain, ordinal)
			}
			for _, ordinal := range followers {
				deletePod(ctx, env, druidv1alpha1.PodName(obj, ordinal))
			}
			expectConditionWithin(ctx, env, recoveryTimeout, etcd.RoleMain, heal.ConditionTypeQuorumLossRecovery,
				druidv1alpha1.ConditionFalse, heal.ReasonRecoveryCompleted)
			Expect(seedworkflow.WaitMembers(ctx, env, etcd.RoleMain, 3, true)).To(Succeed())
			expectCondition(ctx, env, etcd.RoleMain, druidv1alpha1.ConditionTypeReady, druidv1alpha1.ConditionTrue, "")
		})
		events := &corev1.EventList{}
		Expect(env.Client.List(ctx, events, client.InNamespace(env.Namespace))).To(Succeed())
		Expect(events.Items).To(ContainElement(And(HaveField("Reason", heal.EventReasonQuorumLossRecovery),
			HaveField("Message", ContainSubstring("confirmed by the members")))), "the recovery started on the members' reports, not the lease thresholds")
		present := expectKeysOnEveryMember(ctx, env, etcd.RoleMain, seedworkflow.DemoKeyPrefix, 3, nil)
		AddReportEntry("quorum loss data", fmt.Sprintf("%d acknowledged, %d present after the recovery", keys, present))
		Expect(present).To(Equal(keys), "every acknowledged write")
	})
})

// leaderOrdinal waits until the Etcd status names exactly one Leader and returns its ordinal.
func leaderOrdinal(ctx context.Context, env *seedworkflow.Env, role string) int {
	leader := -1
	Eventually(func(g Gomega) {
		obj := &druidv1alpha1.Etcd{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: env.Namespace, Name: etcd.Name(role)}, obj)).To(Succeed())
		var leaders []int
		for _, m := range obj.Status.Members {
			if ordinal, ok := druidv1alpha1.OrdinalOf(obj, m.Name); ok && ptr.Deref(m.Role, "") == druidv1alpha1.EtcdRoleLeader {
				leaders = append(leaders, ordinal)
			}
		}
		g.Expect(leaders).To(HaveLen(1), "leaders in the status of %s", obj.Name)
		leader = leaders[0]
	}).WithContext(ctx).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(Succeed())
	return leader
}
