package gardener_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/seedworkflow"
)

// A highly available shoot restored on a new seed: both etcds are deployed with one member (it restores the
// copied backups alone), a retried deploy keeps them at one, and the scale-up after they are ready brings
// them to three with the peer TLS they were deployed with; from then on the restore deploys as usual.
func TestRestoreOfAHighlyAvailableShootStartsWithOneMemberAndScalesUpKeepingPeerTLS(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	startDruid(t)
	namespace, entryName := newShoot(t, "local", nil)
	wf := &seedworkflow.Env{Client: env.Client, Namespace: namespace, BackupEntryName: entryName, HighAvailability: true,
		Timeout: timeout, Interval: interval}

	for range 2 { // the second time as a retried restore flow
		scaleUp, err := seedworkflow.DeployEtcdsForRestore(ctx, wf)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(scaleUp).To(BeTrue(), "the scale-up is still due")
		for _, role := range []string{etcd.RoleMain, etcd.RoleEvents} {
			obj := getEtcdOf(g, namespace, role)
			g.Expect(obj.Spec.Replicas).To(Equal(int32(1)), "%s restores with one member", obj.Name)
			g.Expect(obj.Spec.Etcd.PeerUrlTLS).NotTo(BeNil(), "%s: a highly available etcd has peer TLS from the start", obj.Name)
		}
	}
	peerTLS := map[string]*druidv1alpha1.PeerTLSConfig{}
	for _, role := range []string{etcd.RoleMain, etcd.RoleEvents} {
		// druid reconciled the deploy: the scale-up is not piled onto a change druid has not seen.
		g.Eventually(func(g Gomega) {
			g.Expect(getEtcdOf(g, namespace, role).Annotations).NotTo(HaveKey(druidv1alpha1.GardenerOperationAnnotation))
		}, timeout, interval).Should(Succeed())
		peerTLS[role] = getEtcdOf(g, namespace, role).Spec.Etcd.PeerUrlTLS
	}

	g.Expect(seedworkflow.ScaleUpEtcds(ctx, wf)).To(Succeed())
	for _, role := range []string{etcd.RoleMain, etcd.RoleEvents} {
		obj := getEtcdOf(g, namespace, role)
		g.Expect(obj.Spec.Replicas).To(Equal(int32(3)), obj.Name)
		g.Expect(obj.Spec.Etcd.PeerUrlTLS).To(Equal(peerTLS[role]), "%s keeps its peer TLS", obj.Name)
	}

	scaleUp, err := seedworkflow.DeployEtcdsForRestore(ctx, wf)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(scaleUp).To(BeFalse(), "restored and scaled up: no second restore through one member")
	g.Expect(getEtcdOf(g, namespace, etcd.RoleMain).Spec.Replicas).To(Equal(int32(3)))
}

func getEtcdOf(g Gomega, namespace, role string) *druidv1alpha1.Etcd {
	obj := &druidv1alpha1.Etcd{}
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: etcd.Name(role)}, obj)).To(Succeed())
	return obj
}
