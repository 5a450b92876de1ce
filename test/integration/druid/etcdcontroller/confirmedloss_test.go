package etcdcontroller_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/heal"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/heal/decide"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/health"
	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
)

// reportingSidecars stand in for sidecars that report no leader (podwire.AnnotationNoLeader) about every
// 200 ms, as of since: a member with data renews its lease with the report (its etcd runs), a member
// without data writes only the report (its etcd does not run). It stops when the test ends.
func reportingSidecars(t *testing.T, ns string, since time.Time, memberData map[string]bool) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		ticker := time.NewTicker(200 * time.Millisecond)
		defer ticker.Stop()
		for {
			for name, data := range memberData {
				lease := &coordinationv1.Lease{}
				if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, lease); err != nil {
					continue
				}
				now := time.Now()
				if data {
					lease.Spec.RenewTime = &metav1.MicroTime{Time: now}
				}
				metav1.SetMetaDataAnnotation(&lease.ObjectMeta, podwire.AnnotationNoLeader,
					podwire.NoLeaderReport{Since: since, ObservedAt: now, MemberData: data}.Encode())
				_ = env.Client.Update(ctx, lease)
			}
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
			}
		}
	}()
}

// confirmedLossCluster is a healthy three-member cluster with a backup store under a druid whose member
// grace periods (10 min + 10 min) outlast every wait here, whose sidecars then stop renewing as usual.
func confirmedLossCluster(t *testing.T) string {
	cfg := testConfig
	cfg.EtcdMemberUnknownThreshold, cfg.EtcdMemberNotReadyThreshold = 10*time.Minute, 10*time.Minute
	restartDruidWith(t, cfg)
	ns := env.CreateNamespace(t)
	createSecret(t, ns, "etcd-backup", "accessKeyID", "secretAccessKey", "region")
	s := healthyCluster(t, ns, 3, withS3Store)
	for _, name := range []string{"etcd-main-0", "etcd-main-1", "etcd-main-2"} {
		s.stop(name)
	}
	return ns
}

// Case 10 confirmed by the members: two of three members' sidecars report that they hold no member data
// and see no leader, the third that its etcd runs without a leader, each for longer than the confirmation
// window. Druid starts the quorum-loss recovery (step 1: StatefulSet to 0, marked) long before the lease
// grace periods would let it, and says why.
func TestQuorumLossConfirmedByTheMembersStartsTheRecovery(t *testing.T) {
	g := NewWithT(t)
	ns := confirmedLossCluster(t)
	setPodReady(t, ns, "etcd-main-1", false)
	setPodReady(t, ns, "etcd-main-2", false)
	setPodReady(t, ns, "etcd-main-0", false) // a member without a leader fails its readiness probe
	reportingSidecars(t, ns, time.Now().Add(-decide.QuorumLossConfirmation-5*time.Second),
		map[string]bool{"etcd-main-0": true, "etcd-main-1": false, "etcd-main-2": false})

	g.Eventually(func(g Gomega) {
		etcd := getEtcd(g, ns)
		for _, name := range []string{"etcd-main-1", "etcd-main-2"} {
			m := memberByName(etcd, name)
			g.Expect(m).NotTo(BeNil(), name)
			g.Expect(m.Status).To(Equal(druidv1alpha1.EtcdMemberStatusNotReady), name)
			g.Expect(m.Reason).To(Equal(health.MemberReasonDataLost), name)
		}
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Eventually(func(g Gomega) {
		sts := statefulSet(g, ns)
		g.Expect(sts.Spec.Replicas).To(Equal(ptr.To(int32(0))))
		g.Expect(sts.Annotations).To(HaveKey(decide.QuorumLossRecoveryAnnotation))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Eventually(func(g Gomega) {
		events := etcdEvents(g, ns, heal.EventReasonQuorumLossRecovery)
		g.Expect(events).NotTo(BeEmpty())
		g.Expect(events[0].Message).To(And(ContainSubstring("confirmed by the members"), ContainSubstring("etcd-main-1, etcd-main-2")))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}

// Short of the confirmation nothing is started before the grace periods: one member that lost its data
// beside two without a leader (a quorum of data is left), and two that lost their data beside a member
// that is merely silent (its sidecar reports nothing: a node gone, a partition). Silence is no proof.
func TestQuorumLossNotConfirmedByTheMembersWaitsForTheGracePeriods(t *testing.T) {
	for name, memberData := range map[string]map[string]bool{
		"one lost, two without a leader": {"etcd-main-0": true, "etcd-main-1": true, "etcd-main-2": false},
		"two lost, the third silent":     {"etcd-main-1": false, "etcd-main-2": false},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			ns := confirmedLossCluster(t)
			for member, data := range memberData {
				if !data {
					setPodReady(t, ns, member, false)
				}
			}
			reportingSidecars(t, ns, time.Now().Add(-decide.QuorumLossConfirmation-5*time.Second), memberData)
			g.Eventually(func(g Gomega) {
				m := memberByName(getEtcd(g, ns), "etcd-main-2")
				g.Expect(m).NotTo(BeNil())
				g.Expect(m.Reason).To(Equal(health.MemberReasonDataLost))
			}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
			g.Consistently(func(g Gomega) {
				sts := statefulSet(g, ns)
				g.Expect(sts.Spec.Replicas).To(Equal(ptr.To(int32(3))))
				g.Expect(sts.Annotations).NotTo(HaveKey(decide.QuorumLossRecoveryAnnotation))
			}).WithTimeout(3 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())
		})
	}
}
