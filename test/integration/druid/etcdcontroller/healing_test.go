package etcdcontroller_test

import (
	"slices"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	etcdcontroller "github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/heal"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/heal/decide"
)

// Case 9: one of three members stays NotReady past the grace period (2 s unknown + 3 s not-ready in this
// suite): exactly its pod is deleted, with a Warning event; the healthy members' pods are untouched, and
// the replacement pod gets its own grace period before it could be deleted again.
func TestMinorityNotReadyPodIsDeleted(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	s := healthyCluster(t, ns, 3)
	healthy := map[string]types.UID{"etcd-main-0": podUID(g, ns, "etcd-main-0"), "etcd-main-1": podUID(g, ns, "etcd-main-1")}

	failMember(t, ns, s, 2)
	g.Eventually(exists(ns, "etcd-main-2", &corev1.Pod{})).WithTimeout(timeout).WithPolling(poll).Should(Satisfy(isNotFound))
	g.Eventually(func(g Gomega) {
		events := etcdEvents(g, ns, heal.EventReasonMemberPodDeleted)
		g.Expect(events).To(HaveLen(1))
		g.Expect(events[0].Type).To(Equal(corev1.EventTypeWarning))
		g.Expect(events[0].Message).To(ContainSubstring("etcd-main-2"))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())

	// The StatefulSet controller recreates the pod; it is not ready yet and must not be deleted right away.
	// (Creation timestamps have second precision, so a pod may look up to 1 s older than it is; the check
	// stays well inside the 3 s grace period.)
	createPod(t, ns, 2, false)
	replacement := podUID(g, ns, "etcd-main-2")
	g.Consistently(func(g Gomega) {
		for name, uid := range healthy {
			g.Expect(podUID(g, ns, name)).To(Equal(uid), name)
		}
		g.Expect(podUID(g, ns, "etcd-main-2")).To(Equal(replacement))
	}).WithTimeout(time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())

	// The member comes back.
	setPodReady(t, ns, "etcd-main-2", true)
	s.resume("etcd-main-2", holder(2))
	expectCondition(t, ns, druidv1alpha1.ConditionTypeAllMembersReady, druidv1alpha1.ConditionTrue, druidv1alpha1.ReasonAllMembersReady)
	g.Expect(etcdEvents(g, ns, heal.EventReasonMemberPodDeleted)).To(HaveLen(1))
}

// Case 10: two of three members NotReady past the grace period with a backup store: the StatefulSet goes to
// 0 (marked), nothing else happens while pods exist; once they are gone every member volume is read (here
// they hold no data, so nothing is uploaded; survivingdata_test.go has the volumes that do), then the
// members' data volumes are deleted (and waited for), the leases are recreated empty, the members
// cleared, clusterSize reset to spec.replicas and the StatefulSet scaled back to 3.
func TestQuorumLossRecovery(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	createSecret(t, ns, "etcd-backup", "accessKeyID", "secretAccessKey", "region")
	s := healthyCluster(t, ns, 3, withS3Store)
	oldLeases := map[string]types.UID{}
	for _, name := range []string{"etcd-main-0", "etcd-main-1", "etcd-main-2"} {
		oldLeases[name] = memberLease(g, ns, name).UID
	}

	memberVolumes := []string{"etcd-main-etcd-main-0", "etcd-main-etcd-main-1", "etcd-main-etcd-main-2"}
	for _, name := range append(slices.Clone(memberVolumes), "unrelated-data") {
		createClaim(t, ns, name)
	}

	failMember(t, ns, s, 1)
	failMember(t, ns, s, 2)
	expectCondition(t, ns, druidv1alpha1.ConditionTypeReady, druidv1alpha1.ConditionFalse, druidv1alpha1.ReasonQuorumLost)

	// Step 1: scaled to 0 and marked.
	g.Eventually(func(g Gomega) {
		sts := statefulSet(g, ns)
		g.Expect(sts.Spec.Replicas).To(Equal(ptr.To(int32(0))))
		g.Expect(sts.Annotations).To(HaveKey(decide.QuorumLossRecoveryAnnotation))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	etcd := expectCondition(t, ns, heal.ConditionTypeQuorumLossRecovery, druidv1alpha1.ConditionTrue, heal.ReasonRecoveryInProgress)
	g.Expect(etcd.Status.LastOperation.Description).To(ContainSubstring("quorum-loss recovery"))

	// Step 2 waits while pods exist: leases untouched, StatefulSet stays at 0.
	g.Eventually(func(g Gomega) string { return getEtcd(g, ns).Status.LastOperation.Description }).
		WithTimeout(timeout).WithPolling(poll).Should(ContainSubstring("waiting for 3 member pod(s) to terminate"))
	g.Consistently(func(g Gomega) {
		for name, uid := range oldLeases {
			g.Expect(memberLease(g, ns, name).UID).To(Equal(uid), name)
		}
		g.Expect(statefulSet(g, ns).Spec.Replicas).To(Equal(ptr.To(int32(0))))
		g.Expect(getEtcd(g, ns).Status.LastOperation.Description).To(ContainSubstring("waiting for 3 member pod(s)"))
	}).WithTimeout(2 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())

	// The StatefulSet controller terminates the pods; the last sidecar dies with its pod.
	s.stop("etcd-main-0")
	deletePods(t, ns, "etcd-main-0", "etcd-main-1", "etcd-main-2")

	// Step 3: every member volume is read before any is deleted; these hold no etcd data.
	for i := range memberVolumes {
		runJob(t, ns, revisionJobName(i), 0, `{"revision":0,"valid":false,"empty":true}`)
	}

	// Step 4: the member volumes are deleted; while the volume protection holds them (the controller
	// manager removes it once no pod uses a claim), the StatefulSet stays at 0 and the leases stay.
	g.Eventually(func(g Gomega) {
		for _, name := range memberVolumes {
			g.Expect(claim(g, ns, name).DeletionTimestamp).NotTo(BeNil(), name)
		}
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Eventually(func(g Gomega) string { return getEtcd(g, ns).Status.LastOperation.Description }).
		WithTimeout(timeout).WithPolling(poll).Should(ContainSubstring("waiting for 3 data volume(s) to be deleted"))
	g.Expect(statefulSet(g, ns).Spec.Replicas).To(Equal(ptr.To(int32(0))))
	for name, uid := range oldLeases {
		g.Expect(memberLease(g, ns, name).UID).To(Equal(uid), name)
	}
	g.Expect(claim(g, ns, "unrelated-data").DeletionTimestamp).To(BeNil(), "a claim of no member is kept")
	releaseClaims(t, ns, memberVolumes...)

	// Steps 5 and 6.
	g.Eventually(func(g Gomega) {
		sts := statefulSet(g, ns)
		g.Expect(sts.Spec.Replicas).To(Equal(ptr.To(int32(3))))
		g.Expect(sts.Annotations).NotTo(HaveKey(decide.QuorumLossRecoveryAnnotation))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	for name, uid := range oldLeases {
		lease := memberLease(g, ns, name)
		g.Expect(lease.UID).NotTo(Equal(uid), "lease %s recreated", name)
		g.Expect(lease.Spec.RenewTime).To(BeNil(), "lease %s empty", name)
		g.Expect(lease.Spec.HolderIdentity).To(BeNil(), "lease %s empty", name)
	}
	etcd = expectCondition(t, ns, heal.ConditionTypeQuorumLossRecovery, druidv1alpha1.ConditionFalse, heal.ReasonRecoveryCompleted)
	g.Expect(etcd.Status.Members).To(BeEmpty())
	g.Eventually(func(g Gomega) *int32 { return recordedClusterSize(g, ns) }).WithTimeout(timeout).WithPolling(poll).Should(Equal(ptr.To(int32(3))))
	g.Expect(etcd.Status.LastOperation.State).To(Equal(druidv1alpha1.LastOperationStateSucceeded))
	g.Expect(etcd.Status.LastOperation.Description).To(ContainSubstring("scaled the StatefulSet back to 3"))
	// One event per step (a step retried after a failed write may report twice, which is fine).
	g.Eventually(func(g Gomega) []string {
		var actions []string
		for _, e := range etcdEvents(g, ns, heal.EventReasonQuorumLossRecovery) {
			if !slices.Contains(actions, e.Action) {
				actions = append(actions, e.Action)
			}
		}
		return actions
	}).WithTimeout(timeout).WithPolling(poll).Should(ConsistOf("ScaleToZero", "ReadSurvivingData", "SaveSurvivingData", "DeleteMemberVolume", "RecreateMemberLeases", "ScaleBack"))

	// The members bootstrap again: their sidecars renew the new leases and the cluster is quorate.
	for i := 0; i < 3; i++ {
		createPod(t, ns, i, true)
	}
	setStatefulSetRolledOut(t, ns, 3)
	startSidecars(t, ns, map[string]string{"etcd-main-0": holder(0), "etcd-main-1": holder(1), "etcd-main-2": holder(2)})
	expectCondition(t, ns, druidv1alpha1.ConditionTypeAllMembersReady, druidv1alpha1.ConditionTrue, druidv1alpha1.ReasonAllMembersReady)
}

// A druid that restarts mid-recovery resumes at the phase the StatefulSet's marker names: here a
// recovery that had reached step 4 (StatefulSet at 0, pods gone, surviving data saved, phase
// DeletingVolumes, the record of the volumes step 3 read) is picked up at step 4 — the volumes are deleted, then steps 5 and 6 run — and
// neither step 1 nor step 3 is repeated.
func TestQuorumLossRecoveryResumesAtTheMarkedPhase(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	createSecret(t, ns, "etcd-backup", "accessKeyID", "secretAccessKey", "region")
	s := healthyCluster(t, ns, 3, withS3Store)
	memberVolumes := []string{"etcd-main-etcd-main-0", "etcd-main-etcd-main-1", "etcd-main-etcd-main-2"}
	for _, name := range memberVolumes {
		createClaim(t, ns, name)
	}
	// What the previous druid left behind after step 3: no member runs, the StatefulSet is at 0 and marked.
	for _, name := range []string{"etcd-main-0", "etcd-main-1", "etcd-main-2"} {
		s.stop(name)
	}
	deletePods(t, ns, "etcd-main-0", "etcd-main-1", "etcd-main-2")
	g.Eventually(func(g Gomega) {
		sts := statefulSet(g, ns)
		sts.Spec.Replicas = ptr.To(int32(0))
		sts.Annotations[decide.QuorumLossRecoveryAnnotation] = string(decide.RecoveryDeletingVolumes)
		var read []*corev1.PersistentVolumeClaim
		for _, name := range memberVolumes {
			read = append(read, claim(g, ns, name))
		}
		sts.Annotations[decide.ReadVolumesAnnotation] = decide.ReadVolumes(read)
		g.Expect(env.Client.Update(ctx, sts)).To(Succeed())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())

	g.Eventually(func(g Gomega) {
		for _, name := range memberVolumes {
			g.Expect(claim(g, ns, name).DeletionTimestamp).NotTo(BeNil(), name)
		}
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Expect(statefulSet(g, ns).Annotations).To(HaveKeyWithValue(decide.QuorumLossRecoveryAnnotation, string(decide.RecoveryDeletingVolumes)))
	releaseClaims(t, ns, memberVolumes...)

	g.Eventually(func(g Gomega) {
		sts := statefulSet(g, ns)
		g.Expect(sts.Spec.Replicas).To(Equal(ptr.To(int32(3))))
		g.Expect(sts.Annotations).NotTo(HaveKey(decide.QuorumLossRecoveryAnnotation))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	etcd := expectCondition(t, ns, heal.ConditionTypeQuorumLossRecovery, druidv1alpha1.ConditionFalse, heal.ReasonRecoveryCompleted)
	g.Expect(etcd.Status.Members).To(BeEmpty())
	g.Eventually(func(g Gomega) []string {
		var steps []string
		for _, e := range etcdEvents(g, ns, heal.EventReasonQuorumLossRecovery) {
			if !slices.Contains(steps, e.Action) {
				steps = append(steps, e.Action)
			}
		}
		return steps
	}).WithTimeout(timeout).WithPolling(poll).Should(ConsistOf("DeleteMemberVolume", "RecreateMemberLeases", "ScaleBack"))
}

// A StatefulSet scaled up while the marker is set (by hand, or by a writer outside druid) sends the
// recovery back to step 2: druid scales to 0 again and marks WaitingForPods; nothing of steps 3–6 runs
// while the pods exist — no volume deleted, no lease reset.
func TestQuorumLossRecoveryScaledUpMidwayGoesBackToWaitingForPods(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	createSecret(t, ns, "etcd-backup", "accessKeyID", "secretAccessKey", "region")
	healthyCluster(t, ns, 3, withS3Store)
	lease0 := memberLease(g, ns, "etcd-main-0").UID
	createClaim(t, ns, "etcd-main-etcd-main-0")
	g.Eventually(func(g Gomega) {
		sts := statefulSet(g, ns)
		sts.Annotations[decide.QuorumLossRecoveryAnnotation] = string(decide.RecoveryResettingMembers)
		g.Expect(env.Client.Update(ctx, sts)).To(Succeed())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())

	g.Eventually(func(g Gomega) {
		sts := statefulSet(g, ns)
		g.Expect(sts.Spec.Replicas).To(Equal(ptr.To(int32(0))))
		g.Expect(sts.Annotations).To(HaveKeyWithValue(decide.QuorumLossRecoveryAnnotation, string(decide.RecoveryWaitingForPods)))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Consistently(func(g Gomega) {
		g.Expect(claim(g, ns, "etcd-main-etcd-main-0").DeletionTimestamp).To(BeNil())
		g.Expect(memberLease(g, ns, "etcd-main-0").UID).To(Equal(lease0))
		g.Expect(statefulSet(g, ns).Annotations).To(HaveKeyWithValue(decide.QuorumLossRecoveryAnnotation, string(decide.RecoveryWaitingForPods)))
	}).WithTimeout(2 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())
}

// Two of three leases go stale past the grace periods while every member pod stays
// Ready (etcd serving, only the lease renewals stopped — e.g. a druid webhook outage), with a backup
// store. Druid must not start the quorum-loss recovery: the StatefulSet stays at 3 without the marker, no
// data volume and no lease is deleted. It says why in the QuorumLossRecovery condition and a Warning
// event, and drops the condition once the leases are renewed again.
func TestQuorumLossRecoveryNotStartedWhileMemberPodsReady(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	createSecret(t, ns, "etcd-backup", "accessKeyID", "secretAccessKey", "region")
	s := healthyCluster(t, ns, 3, withS3Store)
	oldLeases := map[string]types.UID{}
	for _, name := range []string{"etcd-main-0", "etcd-main-1", "etcd-main-2"} {
		oldLeases[name] = memberLease(g, ns, name).UID
	}
	memberVolumes := []string{"etcd-main-etcd-main-0", "etcd-main-etcd-main-1", "etcd-main-etcd-main-2"}
	for _, name := range memberVolumes {
		createClaim(t, ns, name)
	}

	s.stop("etcd-main-1")
	s.stop("etcd-main-2")
	expectCondition(t, ns, druidv1alpha1.ConditionTypeReady, druidv1alpha1.ConditionFalse, druidv1alpha1.ReasonQuorumLost)
	etcd := expectCondition(t, ns, heal.ConditionTypeQuorumLossRecovery, druidv1alpha1.ConditionFalse, heal.ReasonLeaseRenewalSuspected)
	g.Expect(druidv1alpha1.FindCondition(etcd.Status.Conditions, heal.ConditionTypeQuorumLossRecovery).Message).
		To(And(ContainSubstring("etcd-main-1"), ContainSubstring("etcd-main-2"), ContainSubstring("Ready")))
	g.Eventually(func(g Gomega) []corev1.Event {
		return warningEvents(g, ns, heal.EventReasonLeaseRenewalSuspected)
	}).WithTimeout(timeout).WithPolling(poll).ShouldNot(BeEmpty())
	g.Consistently(func(g Gomega) {
		sts := statefulSet(g, ns)
		g.Expect(sts.Spec.Replicas).To(Equal(ptr.To(int32(3))))
		g.Expect(sts.Annotations).NotTo(HaveKey(decide.QuorumLossRecoveryAnnotation))
		for _, name := range memberVolumes {
			g.Expect(claim(g, ns, name).DeletionTimestamp).To(BeNil(), name)
		}
		for name, uid := range oldLeases {
			g.Expect(memberLease(g, ns, name).UID).To(Equal(uid), name)
		}
	}).WithTimeout(3 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())

	s.resume("etcd-main-1", holder(1))
	s.resume("etcd-main-2", holder(2))
	expectCondition(t, ns, druidv1alpha1.ConditionTypeAllMembersReady, druidv1alpha1.ConditionTrue, druidv1alpha1.ReasonAllMembersReady)
	g.Eventually(func(g Gomega) *druidv1alpha1.Condition {
		return druidv1alpha1.FindCondition(getEtcd(g, ns).Status.Conditions, heal.ConditionTypeQuorumLossRecovery)
	}).WithTimeout(timeout).WithPolling(poll).Should(BeNil())
}

// Case 10 without a backup store: druid never wipes the members; it reports that manual action is needed.
func TestQuorumLossWithoutBackupNeedsManualAction(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	s := healthyCluster(t, ns, 3)
	lease0 := memberLease(g, ns, "etcd-main-0").UID
	failMember(t, ns, s, 1)
	failMember(t, ns, s, 2)

	etcd := expectCondition(t, ns, heal.ConditionTypeQuorumLossRecovery, druidv1alpha1.ConditionFalse, heal.ReasonManualInterventionRequired)
	g.Expect(druidv1alpha1.FindCondition(etcd.Status.Conditions, heal.ConditionTypeQuorumLossRecovery).Message).To(ContainSubstring("no backup store"))
	g.Eventually(func(g Gomega) []corev1.Event {
		return warningEvents(g, ns, heal.EventReasonManualInterventionRequired)
	}).WithTimeout(timeout).WithPolling(poll).ShouldNot(BeEmpty())
	g.Consistently(func(g Gomega) {
		g.Expect(statefulSet(g, ns).Spec.Replicas).To(Equal(ptr.To(int32(3))))
		g.Expect(memberLease(g, ns, "etcd-main-0").UID).To(Equal(lease0))
	}).WithTimeout(2 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())
}

// Case 12: a healthy 5-member cluster scaled down to 3: the StatefulSet stays at 5 replicas until the
// backup leader marked members 3 and 4 as removed from the etcd membership, then goes to 3; the leases of
// ordinals 3 and 4 are deleted and clusterSize becomes 3 while the cluster stays quorate.
func TestScaleDownFiveToThree(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	s := healthyCluster(t, ns, 5)
	g.Eventually(func(g Gomega) *int32 { return recordedClusterSize(g, ns) }).WithTimeout(timeout).WithPolling(poll).Should(Equal(ptr.To(int32(5))))

	updateEtcd(t, ns, func(e *druidv1alpha1.Etcd) {
		e.Spec.Replicas = 3
		e.Annotations = map[string]string{druidv1alpha1.GardenerOperationAnnotation: druidv1alpha1.OperationReconcile}
	})
	expectScaleInHeld(t, ns, 5, "scale-in from 5 to 3", "etcd-main-4, etcd-main-3")
	markLeftCluster(t, ns, 4)
	markLeftCluster(t, ns, 3)
	g.Eventually(func(g Gomega) *int32 { return statefulSet(g, ns).Spec.Replicas }).
		WithTimeout(timeout).WithPolling(poll).Should(Equal(ptr.To(int32(3))))
	// The StatefulSet controller removes the highest ordinals; their sidecars stop with them.
	s.stop("etcd-main-3")
	s.stop("etcd-main-4")
	deletePods(t, ns, "etcd-main-3", "etcd-main-4")
	setStatefulSetRolledOut(t, ns, 3)

	for _, name := range []string{"etcd-main-3", "etcd-main-4"} {
		g.Eventually(exists(ns, name, &coordinationv1.Lease{})).WithTimeout(timeout).WithPolling(poll).Should(Satisfy(isNotFound), name)
	}
	waitReconciled(t, ns)
	g.Eventually(func(g Gomega) {
		etcd := getEtcd(g, ns)
		g.Expect(recordedClusterSize(g, ns)).To(Equal(ptr.To(int32(3))))
		g.Expect(etcd.Status.Members).To(HaveLen(3))
		g.Expect(druidv1alpha1.FindCondition(etcd.Status.Conditions, druidv1alpha1.ConditionTypeReady).Status).To(Equal(druidv1alpha1.ConditionTrue))
		g.Expect(druidv1alpha1.FindCondition(etcd.Status.Conditions, druidv1alpha1.ConditionTypeAllMembersReady).Status).To(Equal(druidv1alpha1.ConditionTrue))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}

// Hibernating a degraded cluster goes ahead: the pod template changes with the replicas (the ConfigMap's
// initial cluster), and AllMembersReady keeps its False through the hibernation (reason NotChecked, as the
// upstream druid keeps it), which must not hold the change back as a rolling update.
func TestHibernatingADegradedClusterIsNotHeldBack(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	s := healthyCluster(t, ns, 3)
	failMember(t, ns, s, 2)
	expectCondition(t, ns, druidv1alpha1.ConditionTypeAllMembersReady, druidv1alpha1.ConditionFalse, druidv1alpha1.ReasonNotAllMembersReady)

	updateEtcd(t, ns, func(e *druidv1alpha1.Etcd) {
		e.Spec.Replicas = 0
		e.Annotations = map[string]string{druidv1alpha1.GardenerOperationAnnotation: druidv1alpha1.OperationReconcile}
	})
	g.Eventually(func(g Gomega) int32 { return ptr.Deref(statefulSet(g, ns).Spec.Replicas, -1) }).
		WithTimeout(timeout).WithPolling(poll).Should(Equal(int32(0)))
	etcd := expectCondition(t, ns, druidv1alpha1.ConditionTypeAllMembersReady, druidv1alpha1.ConditionFalse, druidv1alpha1.ReasonNotChecked)
	g.Expect(druidv1alpha1.FindCondition(etcd.Status.Conditions, druidv1alpha1.ConditionTypeReady).Status).To(Equal(druidv1alpha1.ConditionTrue), "kept from before")
	waitReconciled(t, ns)
}

// The PodDisruptionBudget's decision-table policy: minAvailable is the quorum (3 of 5) while all members are ready, the
// number of Ready members (4) as soon as one is not — without a spec reconcile — and the quorum again
// once the member is back.
func TestPodDisruptionBudgetFollowsAllMembersReady(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	s := healthyCluster(t, ns, 5)
	minAvailable := func(g Gomega) int32 {
		pdb := &policyv1.PodDisruptionBudget{}
		g.Expect(exists(ns, etcdName, pdb)()).To(Succeed())
		return pdb.Spec.MinAvailable.IntVal
	}
	g.Eventually(minAvailable).WithTimeout(timeout).WithPolling(poll).Should(Equal(int32(3)))

	failMember(t, ns, s, 4)
	g.Eventually(minAvailable).WithTimeout(timeout).WithPolling(poll).Should(Equal(int32(4)))
	g.Expect(getEtcd(g, ns).Status.ObservedGeneration).To(Equal(ptr.To(int64(1))), "no spec reconcile involved")

	setPodReady(t, ns, "etcd-main-4", true)
	s.resume("etcd-main-4", holder(4))
	g.Eventually(minAvailable).WithTimeout(timeout).WithPolling(poll).Should(Equal(int32(3)))
	g.Eventually(func(g Gomega) []corev1.Event {
		return etcdEvents(g, ns, etcdcontroller.EventReasonPodDisruptionBudgetUpdated)
	}).
		WithTimeout(timeout).WithPolling(poll).ShouldNot(BeEmpty())
}
