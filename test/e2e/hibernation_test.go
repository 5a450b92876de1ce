//go:build e2e

package e2e

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	etcdcontroller "github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/seedworkflow"
)

// Scenario: hibernation takes a full snapshot first. Three members take writes; the writer
// stops, the cluster's revision R is read, and Gardener hibernates the shoot (etcd-main to 0). Before the
// StatefulSet goes to 0, druid has the backup leader take a full snapshot: its revision is R, the store
// holds it, and status.lastFullSnapshot names it. Waking up (0 → 3) starts the members from their volumes:
// every acknowledged write is there and the revision is R again, not an older one restored from the store.
var _ = Describe("hibernation", func() {
	It("takes a full snapshot at the cluster's revision before scaling to 0 and wakes up with every write", func(ctx SpecContext) {
		env := newShoot(ctx, "hibernation", 0)
		measure("bootstrap 3 members", func() { deployMain(ctx, env, 3) })
		_, err := seedworkflow.WriteData(ctx, env, etcd.RoleMain, 100)
		Expect(err).NotTo(HaveOccurred())

		w := seedworkflow.StartWriter(ctx, env, etcd.RoleMain, "/e2e/hibernation/")
		Eventually(w.AckedCount).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(BeNumerically(">=", 50))
		acked, failures, _ := w.Stop()
		AddReportEntry("writes before hibernation", fmt.Sprintf("%d acknowledged, %d failed", len(acked), failures))
		revision := clusterRevision(ctx, env)

		measure("hibernate 3 → 0", func() {
			Expect(seedworkflow.Component(env, etcd.RoleMain).Scale(ctx, 0)).To(Succeed())
			Eventually(func(g Gomega) {
				sts := &appsv1.StatefulSet{}
				g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: env.Namespace, Name: etcd.Name(etcd.RoleMain)}, sts)).To(Succeed())
				g.Expect(*sts.Spec.Replicas).To(BeZero())
				g.Expect(sts.Status.Replicas).To(BeZero(), "member pods still running")
			}).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(Succeed())
		})
		lastFull, _ := lastSnapshots(ctx, env, etcd.RoleMain)
		Expect(lastFull).NotTo(BeNil())
		Expect(lastFull.EndRevision).To(Equal(revision), "the snapshot before hibernation holds the cluster's revision")
		Expect(lastFull.Name).NotTo(BeNil())
		snapName := *lastFull.Name
		Expect(snapName).To(HavePrefix(fmt.Sprintf("Full-00000000-%08d-", revision)))
		backups, err := seedworkflow.ListBackups(ctx, env)
		Expect(err).NotTo(HaveOccurred())
		Expect(backups).To(ContainElement(HaveField("Key", HaveSuffix("/v2/"+snapName))), "the snapshot is in the store")
		Expect(etcdEventReasons(ctx, env, etcd.RoleMain)).To(ContainElement(etcdcontroller.EventReasonFullSnapshotBeforeHibernation))

		measure("wake up 0 → 3", func() {
			_, err := seedworkflow.ScaleMain(ctx, env, 3)
			Expect(err).NotTo(HaveOccurred())
		})
		Expect(clusterRevision(ctx, env)).To(Equal(revision), "woke up from the volumes at the revision of hibernation")
		expectKeysOnEveryMember(ctx, env, etcd.RoleMain, "/e2e/hibernation/", 3, acked)
		_, err = seedworkflow.CheckData(ctx, env, etcd.RoleMain, 100)
		Expect(err).NotTo(HaveOccurred())
	})
})

// clusterRevision is etcd-main's current revision (a linearizable read's header).
func clusterRevision(ctx context.Context, env *seedworkflow.Env) int64 {
	cli, err := seedworkflow.EtcdClient(ctx, env, etcd.RoleMain)
	Expect(err).NotTo(HaveOccurred())
	defer cli.Close()
	resp, err := cli.Get(ctx, "/e2e/hibernation/revision-probe")
	Expect(err).NotTo(HaveOccurred())
	return resp.Header.Revision
}

// etcdEventReasons lists the reasons of the events on the Etcd of role.
func etcdEventReasons(ctx SpecContext, env *seedworkflow.Env, role string) []string {
	list := &corev1.EventList{}
	Expect(env.Client.List(ctx, list, client.InNamespace(env.Namespace))).To(Succeed())
	var reasons []string
	for _, e := range list.Items {
		if e.InvolvedObject.Kind == "Etcd" && e.InvolvedObject.Name == etcd.Name(role) {
			reasons = append(reasons, e.Reason)
		}
	}
	return reasons
}
