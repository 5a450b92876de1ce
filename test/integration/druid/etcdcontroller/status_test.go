package etcdcontroller_test

import (
	"context"
	"maps"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// sidecars renew member leases like the members' sidecars do, every 300 ms, until a member is stopped.
type sidecars struct {
	mu      sync.Mutex
	holders map[string]string
	// tlsEnabled is the members' peer TLS annotation value, switched by setPeerTLS.
	tlsEnabled string
	// annotations are further lease annotations per member ("" values remove them), set by annotate.
	annotations map[string]map[string]string
}

func startSidecars(t *testing.T, namespace string, holders map[string]string) *sidecars {
	return startSidecarsWithPeerTLS(t, namespace, holders, "false")
}

// startSidecarsWithPeerTLS is startSidecars with the members' peer TLS annotation set to tlsEnabled.
func startSidecarsWithPeerTLS(t *testing.T, namespace string, holders map[string]string, tlsEnabled string) *sidecars {
	s := &sidecars{holders: holders, tlsEnabled: tlsEnabled}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		ticker := time.NewTicker(300 * time.Millisecond)
		defer ticker.Stop()
		for {
			s.mu.Lock()
			alive := map[string]string{}
			for k, v := range s.holders {
				alive[k] = v
			}
			tlsEnabled := s.tlsEnabled
			annotations := map[string]map[string]string{}
			for member, kv := range s.annotations {
				annotations[member] = maps.Clone(kv)
			}
			s.mu.Unlock()
			for name, holder := range alive {
				lease := &coordinationv1.Lease{}
				if err := env.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, lease); err != nil {
					continue
				}
				lease.Spec.HolderIdentity = ptr.To(holder)
				lease.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
				metav1.SetMetaDataAnnotation(&lease.ObjectMeta, druidv1alpha1.TLSEnabledAnnotation, tlsEnabled)
				for key, value := range annotations[name] {
					metav1.SetMetaDataAnnotation(&lease.ObjectMeta, key, value)
				}
				_ = env.Client.Update(ctx, lease)
			}
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
			}
		}
	}()
	return s
}

// setPeerTLS switches the peer TLS annotation the members report from their next renewal on, as the
// sidecars do once etcd runs with https peer URLs.
func (s *sidecars) setPeerTLS(tlsEnabled string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tlsEnabled = tlsEnabled
}

// annotate makes member write key: value into its lease from its next renewal on.
func (s *sidecars) annotate(member, key, value string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.annotations == nil {
		s.annotations = map[string]map[string]string{}
	}
	if s.annotations[member] == nil {
		s.annotations[member] = map[string]string{}
	}
	s.annotations[member][key] = value
}

// set makes member renew its lease with holder from its next renewal on.
func (s *sidecars) set(member, holder string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.holders[member] = holder
}

func (s *sidecars) stop(member string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.holders, member)
}

func memberByName(etcd *druidv1alpha1.Etcd, name string) *druidv1alpha1.EtcdMemberStatus {
	for i := range etcd.Status.Members {
		if etcd.Status.Members[i].Name == name {
			return &etcd.Status.Members[i]
		}
	}
	return nil
}

func expectMember(t *testing.T, namespace, name string, status druidv1alpha1.EtcdMemberConditionStatus, reason string) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) string {
		m := memberByName(getEtcd(g, namespace), name)
		g.Expect(m).NotTo(BeNil(), name)
		return string(m.Status) + "/" + m.Reason
	}).WithTimeout(timeout).WithPolling(poll).Should(Equal(string(status) + "/" + reason))
}

// Healthy → minority down → quorum lost, driven only by which sidecars keep renewing their leases
// (unknown threshold 2 s, not-ready threshold 3 s in this suite).
func TestStatusFromMemberLeases(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	createEtcd(t, ns, 3)
	waitReconciled(t, ns)
	for i := 0; i < 3; i++ {
		createPod(t, ns, i, true)
	}
	setStatefulSetRolledOut(t, ns, 3)
	s := startSidecars(t, ns, map[string]string{
		"etcd-main-0": "8e9e05c52164694d:cdf818194e3a8c32:Leader",
		"etcd-main-1": "91bc3c398fb3c146:cdf818194e3a8c32:Member",
		"etcd-main-2": "fd422379fda50e48:Member", // an older sidecar's format
	})

	// Healthy: all leases fresh.
	etcd := expectCondition(t, ns, druidv1alpha1.ConditionTypeAllMembersReady, druidv1alpha1.ConditionTrue, druidv1alpha1.ReasonAllMembersReady)
	g.Expect(druidv1alpha1.FindCondition(etcd.Status.Conditions, druidv1alpha1.ConditionTypeReady).Reason).To(Equal(druidv1alpha1.ReasonQuorate))
	g.Expect(druidv1alpha1.FindCondition(etcd.Status.Conditions, druidv1alpha1.ConditionTypeAllMembersUpdated).Status).To(Equal(druidv1alpha1.ConditionTrue))
	g.Expect(druidv1alpha1.FindCondition(etcd.Status.Conditions, druidv1alpha1.ConditionTypeDataVolumesReady).Status).To(Equal(druidv1alpha1.ConditionTrue))
	g.Expect(druidv1alpha1.FindCondition(etcd.Status.Conditions, druidv1alpha1.ConditionTypeBackupReady)).To(BeNil(), "no store, no BackupReady")
	g.Expect(etcd.Status.Members).To(HaveLen(3))
	g.Expect(memberByName(etcd, "etcd-main-0").ID).To(Equal(ptr.To("8e9e05c52164694d")))
	g.Expect(memberByName(etcd, "etcd-main-0").Role).To(Equal(ptr.To(druidv1alpha1.EtcdRoleLeader)))
	g.Expect(memberByName(etcd, "etcd-main-2").ID).To(Equal(ptr.To("fd422379fda50e48")))
	g.Expect(memberByName(etcd, "etcd-main-2").Role).To(Equal(ptr.To(druidv1alpha1.EtcdRoleMember)))
	g.Eventually(func(g Gomega) *int32 { return recordedClusterSize(g, ns) }).WithTimeout(timeout).WithPolling(poll).Should(Equal(ptr.To(int32(3))))
	g.Expect(etcd.Status.ReadyReplicas).To(Equal(int32(3)))
	g.Expect(etcd.Status.Replicas).To(Equal(int32(3)))
	g.Expect(etcd.Status.Ready).To(Equal(ptr.To(true)))
	g.Expect(etcd.Status.PeerUrlTLSEnabled).To(Equal(ptr.To(false)))
	healthySince := memberByName(etcd, "etcd-main-1").LastTransitionTime

	// Minority down: member 2 stops renewing; its pod is still ready, so it is Unknown first, then NotReady.
	s.stop("etcd-main-2")
	expectMember(t, ns, "etcd-main-2", druidv1alpha1.EtcdMemberStatusUnknown, druidv1alpha1.MemberReasonLeaseExpired)
	expectMember(t, ns, "etcd-main-2", druidv1alpha1.EtcdMemberStatusNotReady, druidv1alpha1.MemberReasonUnknownGracePeriodExceeded)
	etcd = expectCondition(t, ns, druidv1alpha1.ConditionTypeAllMembersReady, druidv1alpha1.ConditionFalse, druidv1alpha1.ReasonNotAllMembersReady)
	g.Expect(druidv1alpha1.FindCondition(etcd.Status.Conditions, druidv1alpha1.ConditionTypeReady).Reason).To(Equal(druidv1alpha1.ReasonQuorate))
	g.Expect(memberByName(etcd, "etcd-main-1").LastTransitionTime).To(Equal(healthySince), "a member whose status holds keeps its transition time")

	// A member whose pod is not ready goes NotReady/PodNotReady as soon as its lease expires.
	setPodReady(t, ns, "etcd-main-1", false)
	s.stop("etcd-main-1")
	expectMember(t, ns, "etcd-main-1", druidv1alpha1.EtcdMemberStatusNotReady, druidv1alpha1.MemberReasonPodNotReady)

	// Quorum lost: two of three members NotReady.
	etcd = expectCondition(t, ns, druidv1alpha1.ConditionTypeReady, druidv1alpha1.ConditionFalse, druidv1alpha1.ReasonQuorumLost)
	g.Eventually(func(g Gomega) *int32 { return recordedClusterSize(g, ns) }).WithTimeout(timeout).WithPolling(poll).Should(Equal(ptr.To(int32(3))), "a cluster that lost quorum keeps its size")
	g.Expect(memberByName(etcd, "etcd-main-0").Status).To(Equal(druidv1alpha1.EtcdMemberStatusReady))
}

// threeRenewingMembers creates a 3-member Etcd in a new namespace with Ready pods and sidecars that renew
// the member leases of one cluster (etcd-main-0 leading).
func threeRenewingMembers(t *testing.T) (string, *sidecars) {
	t.Helper()
	ns := env.CreateNamespace(t)
	createEtcd(t, ns, 3)
	waitReconciled(t, ns)
	for i := 0; i < 3; i++ {
		createPod(t, ns, i, true)
	}
	return ns, startSidecars(t, ns, map[string]string{
		"etcd-main-0": "8e9e05c52164694d:cdf818194e3a8c32:Leader",
		"etcd-main-1": "91bc3c398fb3c146:cdf818194e3a8c32:Member",
		"etcd-main-2": "fd422379fda50e48:cdf818194e3a8c32:Member",
	})
}

// ClusterIDMismatch turns True when a member's lease names another cluster ID than the others', as the
// upstream druid reports a member that bootstrapped a cluster of its own.
func TestClusterIDMismatchFromMemberLeases(t *testing.T) {
	ns, s := threeRenewingMembers(t)
	expectCondition(t, ns, druidv1alpha1.ConditionTypeClusterIDMismatch, druidv1alpha1.ConditionFalse, druidv1alpha1.ReasonNoClusterIDMismatch)

	s.set("etcd-main-2", "5a1b0d2e3f4c5b6a:0badc0ffee000001:Leader")
	etcd := expectCondition(t, ns, druidv1alpha1.ConditionTypeClusterIDMismatch, druidv1alpha1.ConditionTrue, druidv1alpha1.ReasonMultipleClusterIDs)
	NewWithT(t).Expect(druidv1alpha1.FindCondition(etcd.Status.Conditions, druidv1alpha1.ConditionTypeClusterIDMismatch).Message).
		To(ContainSubstring("0badc0ffee000001: etcd-main-2"))
}

// EtcdAlarm follows the alarms the members' sidecars write into their leases: absent while they write
// none (upstream's sidecars), False without an alarm, True with NOSPACE (and the backup leader's reason
// once its recovery cannot disarm), False again once it is gone; each change of reason is an event.
func TestEtcdAlarmFromMemberLeases(t *testing.T) {
	g := NewWithT(t)
	ns, s := threeRenewingMembers(t)
	etcd := expectCondition(t, ns, druidv1alpha1.ConditionTypeReady, druidv1alpha1.ConditionTrue, druidv1alpha1.ReasonQuorate)
	g.Expect(druidv1alpha1.FindCondition(etcd.Status.Conditions, druidv1alpha1.ConditionTypeEtcdAlarm)).To(BeNil(), "no member reports alarms")

	for _, member := range []string{"etcd-main-0", "etcd-main-1", "etcd-main-2"} {
		s.annotate(member, druidv1alpha1.AlarmsAnnotation, "")
	}
	expectCondition(t, ns, druidv1alpha1.ConditionTypeEtcdAlarm, druidv1alpha1.ConditionFalse, druidv1alpha1.ReasonNoAlarm)

	s.annotate("etcd-main-0", druidv1alpha1.AlarmsAnnotation, "NOSPACE")
	s.annotate("etcd-main-1", druidv1alpha1.AlarmsAnnotation, "NOSPACE")
	expectCondition(t, ns, druidv1alpha1.ConditionTypeEtcdAlarm, druidv1alpha1.ConditionTrue, druidv1alpha1.ReasonNoSpace)
	g.Eventually(func(g Gomega) []corev1.Event { return warningEvents(g, ns, "EtcdAlarm") }).WithTimeout(timeout).WithPolling(poll).
		Should(ContainElement(HaveField("Message", HavePrefix("NoSpace: alarm NOSPACE active (reported by etcd-main-"))))

	s.annotate("etcd-main-0", druidv1alpha1.NoSpaceCannotRecoverAnnotation, "live data over the quota after compaction")
	etcd = expectCondition(t, ns, druidv1alpha1.ConditionTypeEtcdAlarm, druidv1alpha1.ConditionTrue, druidv1alpha1.ReasonNoSpaceCannotRecover)
	g.Expect(druidv1alpha1.FindCondition(etcd.Status.Conditions, druidv1alpha1.ConditionTypeEtcdAlarm).Message).To(ContainSubstring("raise spec.etcd.quota"))

	s.annotate("etcd-main-0", druidv1alpha1.NoSpaceCannotRecoverAnnotation, "")
	s.annotate("etcd-main-0", druidv1alpha1.AlarmsAnnotation, "")
	s.annotate("etcd-main-1", druidv1alpha1.AlarmsAnnotation, "")
	expectCondition(t, ns, druidv1alpha1.ConditionTypeEtcdAlarm, druidv1alpha1.ConditionFalse, druidv1alpha1.ReasonNoAlarm)
}

// Warning events on a member's data volume turn DataVolumesReady False.
func TestDataVolumeWarnings(t *testing.T) {
	ns := env.CreateNamespace(t)
	createEtcd(t, ns, 1)
	waitReconciled(t, ns)
	expectCondition(t, ns, druidv1alpha1.ConditionTypeDataVolumesReady, druidv1alpha1.ConditionTrue, druidv1alpha1.ReasonNoWarningsForDataVolume)
	NewWithT(t).Expect(env.Client.Create(ctx, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "pvc-warning", Namespace: ns},
		InvolvedObject: corev1.ObjectReference{Kind: "PersistentVolumeClaim", Name: "etcd-main-etcd-main-0", Namespace: ns},
		Type:           corev1.EventTypeWarning, Reason: "ProvisioningFailed", Message: "storageclass not found",
		FirstTimestamp: metav1.Now(), LastTimestamp: metav1.Now(), Count: 1,
	})).To(Succeed())
	etcd := expectCondition(t, ns, druidv1alpha1.ConditionTypeDataVolumesReady, druidv1alpha1.ConditionFalse, druidv1alpha1.ReasonWarningsForDataVolume)
	NewWithT(t).Expect(druidv1alpha1.FindCondition(etcd.Status.Conditions, druidv1alpha1.ConditionTypeDataVolumesReady).Message).To(ContainSubstring("ProvisioningFailed"))
}

// With spec.replicas 0 every condition is NotChecked.
func TestHibernatedEtcdIsNotChecked(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	createSecret(t, ns, "etcd-backup", "accessKeyID", "secretAccessKey", "region")
	createEtcd(t, ns, 0, withS3Store)
	waitReconciled(t, ns)
	etcd := expectCondition(t, ns, druidv1alpha1.ConditionTypeReady, druidv1alpha1.ConditionUnknown, druidv1alpha1.ReasonNotChecked)
	for _, ct := range []druidv1alpha1.ConditionType{druidv1alpha1.ConditionTypeAllMembersReady, druidv1alpha1.ConditionTypeAllMembersUpdated,
		druidv1alpha1.ConditionTypeBackupReady, druidv1alpha1.ConditionTypeDataVolumesReady, druidv1alpha1.ConditionTypeClusterIDMismatch} {
		g.Expect(druidv1alpha1.FindCondition(etcd.Status.Conditions, ct)).NotTo(BeNil(), string(ct))
		g.Expect(druidv1alpha1.FindCondition(etcd.Status.Conditions, ct).Reason).To(Equal(druidv1alpha1.ReasonNotChecked), string(ct))
	}
}
