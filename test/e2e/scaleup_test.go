//go:build e2e

package e2e

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/seedworkflow"
)

// Scenario 2: a single member scales to three with peer TLS switched on in place while a
// client keeps writing. Only the first member restarts, once: the peer-TLS rollout (its peer URL update
// needs no etcd restart, and a new member's wrapper starts etcd only once the first member answers). Every
// member lease says tls-enabled, and no acknowledged write is lost. The recorded figure shows whether the
// new members waited for the seed's DNS cache, which nothing of the first member's pod fills with its
// old address or with "no such name" for the new members any more (design.md, "Scale-up with peer TLS").
var _ = Describe("scale-up", func() {
	It("scales 1 → 3 with peer TLS while a client writes", Label(recoveryLabel), func(ctx SpecContext) {
		env := newShoot(ctx, "scaleup", 0)
		measure("bootstrap 1 member", func() { deployMain(ctx, env, 1) })
		_, err := seedworkflow.WriteData(ctx, env, etcd.RoleMain, 100)
		Expect(err).NotTo(HaveOccurred())

		restarts := trackRestarts(ctx, env, etcd.RoleMain)
		w := seedworkflow.StartWriter(ctx, env, etcd.RoleMain, "/e2e/scaleup/")
		took := measure("scale-up 1 → 3 with peer TLS", func() {
			_, err := seedworkflow.ScaleMain(ctx, env, 3)
			Expect(err).NotTo(HaveOccurred())
		})
		// A few acknowledged writes on the three-member cluster, then stop.
		acksAfterScale := w.AckedCount() + 20
		Eventually(w.AckedCount).WithTimeout(waitTimeout).WithPolling(pollInterval).Should(BeNumerically(">=", acksAfterScale))
		acked, failures, gap := w.Stop()
		total, detail := restarts.stop()
		fmt.Fprintf(GinkgoWriter, "writer: %d acknowledged, %d failed attempts, longest gap %s\nrestarts: %d (%s)\n", len(acked), failures, gap, total, detail)
		AddReportEntry("scale-up writes", fmt.Sprintf("%d acknowledged, %d failed, longest gap %s; member restarts %d (%s)", len(acked), failures, gap, total, detail))

		recordRecovery("1 → 3 with peer TLS", took, len(acked), lostWrites(ctx, env, etcd.RoleMain, "/e2e/scaleup/", acked))
		Expect(total).To(BeNumerically("<=", 1), "member restarts: %s", detail)

		obj := getEtcd(ctx, env, etcd.RoleMain)
		for _, name := range druidv1alpha1.MemberLeaseNames(obj) {
			lease := &coordinationv1.Lease{}
			Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: env.Namespace, Name: name}, lease)).To(Succeed())
			Expect(lease.Annotations).To(HaveKeyWithValue(druidv1alpha1.TLSEnabledAnnotation, "true"), "member lease %s", name)
		}

		expectKeysOnEveryMember(ctx, env, etcd.RoleMain, "/e2e/scaleup/", 3, acked)
		_, err = seedworkflow.CheckData(ctx, env, etcd.RoleMain, 100)
		Expect(err).NotTo(HaveOccurred())
	})
})
