package gardener_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/seedworkflow"
)

// The source of a migration wakes a hibernated etcd-main to take the final full snapshot (gardenlet scales
// etcd up before it snapshots); an etcd that is running is left as it is.
func TestMigrationSourceWakesAHibernatedEtcdForTheFinalSnapshot(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	startDruid(t)
	namespace, entryName := newShoot(t, "local", nil)
	wf := &seedworkflow.Env{Client: env.Client, Namespace: namespace, BackupEntryName: entryName, Timeout: timeout, Interval: interval}
	main := seedworkflow.Component(wf, etcd.RoleMain)
	g.Expect(main.Deploy(ctx)).To(Succeed())
	reconciled := func() {
		g.Eventually(func(g Gomega) {
			g.Expect(getEtcdOf(g, namespace, etcd.RoleMain).Annotations).NotTo(HaveKey(druidv1alpha1.GardenerOperationAnnotation))
		}, timeout, interval).Should(Succeed())
	}
	reconciled()

	woke, err := seedworkflow.WakeForFinalSnapshot(ctx, wf)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(woke).To(BeFalse(), "a running etcd is not touched")
	g.Expect(getEtcdOf(g, namespace, etcd.RoleMain).Spec.Replicas).To(Equal(int32(1)))

	g.Expect(main.Scale(ctx, 0)).To(Succeed()) // hibernation
	reconciled()
	woke, err = seedworkflow.WakeForFinalSnapshot(ctx, wf)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(woke).To(BeTrue())
	g.Expect(getEtcdOf(g, namespace, etcd.RoleMain).Spec.Replicas).To(Equal(int32(1)), "woken up to its member count")
}
