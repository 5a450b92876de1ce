package gardener_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

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

// A hibernated etcd-main of three members wakes to three even in a flow that does not know the shoot is
// highly available: one member of three has no quorum and could take no snapshot. The size is the one
// druid recorded on the StatefulSet.
func TestMigrationSourceWakesAHibernatedClusterToTheSizeItHad(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	startDruid(t)
	namespace, entryName := newShoot(t, "local", nil)
	ha := &seedworkflow.Env{Client: env.Client, Namespace: namespace, BackupEntryName: entryName, Timeout: timeout, Interval: interval, HighAvailability: true}
	main := seedworkflow.Component(ha, etcd.RoleMain)
	g.Expect(main.Deploy(ctx)).To(Succeed())
	reconciledAt := func(replicas int32) {
		g.Eventually(func(g Gomega) {
			e := getEtcdOf(g, namespace, etcd.RoleMain)
			g.Expect(e.Annotations).NotTo(HaveKey(druidv1alpha1.GardenerOperationAnnotation))
			g.Expect(e.Status.Replicas).To(Equal(replicas))
		}, timeout, interval).Should(Succeed())
	}
	reconciledAt(0)
	g.Eventually(func(g Gomega) {
		sts := &appsv1.StatefulSet{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: etcd.Name(etcd.RoleMain)}, sts)).To(Succeed())
		g.Expect(sts.Annotations).To(HaveKeyWithValue(druidv1alpha1.ClusterSizeAnnotation, "3"))
	}, timeout, interval).Should(Succeed())
	g.Expect(main.Scale(ctx, 0)).To(Succeed()) // hibernation
	g.Eventually(func(g Gomega) {
		g.Expect(getEtcdOf(g, namespace, etcd.RoleMain).Annotations).NotTo(HaveKey(druidv1alpha1.GardenerOperationAnnotation))
	}, timeout, interval).Should(Succeed())

	plain := &seedworkflow.Env{Client: env.Client, Namespace: namespace, BackupEntryName: entryName, Timeout: timeout, Interval: interval}
	woke, err := seedworkflow.WakeForFinalSnapshot(ctx, plain)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(woke).To(BeTrue())
	g.Expect(getEtcdOf(g, namespace, etcd.RoleMain).Spec.Replicas).To(Equal(int32(3)), "woken up to the size it had")
}
