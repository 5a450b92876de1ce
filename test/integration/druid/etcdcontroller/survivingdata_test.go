package etcdcontroller_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/heal"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/heal/decide"
)

// "quorum loss recovery keeps what any surviving volume holds": the backup store holds up to
// revision 120 (delta snapshot lease), member 0's volume holds revision 150 — writes that reached a
// surviving volume but no snapshot. Before any volume is deleted, druid reads every member volume with a
// data-revision Job (volume mounted read-only, result in the pod's termination message), picks the most
// advanced one (member 0, 150), has it uploaded as the newest full snapshot by a preserve-data Job, and
// only then deletes the volumes; the members then bootstrap from a backup that holds revision 150.
//
// Regression: before the SavingSurvivingData step, step 3 deleted every member volume as soon as the
// pods were gone, and revisions 121–150 were lost with member 0's volume.
func TestQuorumLossRecoveryKeepsTheMostAdvancedSurvivingVolume(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	startQuorumLoss(t, ns, 120)

	// Step 3 reads every member volume before anything is deleted.
	g.Eventually(func(g Gomega) {
		noClaimDeleted(g, ns)
		for i := range memberClaims {
			g.Expect(exists(ns, revisionJobName(i), &batchv1.Job{})()).To(Succeed())
		}
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Expect(statefulSet(g, ns).Annotations).To(HaveKeyWithValue(decide.QuorumLossRecoveryAnnotation, "SavingSurvivingData"))
	for i, claimName := range memberClaims {
		pod := waitForJob(t, ns, revisionJobName(i)).Spec.Template.Spec
		g.Expect(pod.Containers).To(HaveLen(1))
		g.Expect(pod.Containers[0].Args).To(ContainElement("data-revision"))
		g.Expect(pod.Containers[0].Args).To(ContainElement("--data-dir=/var/etcd/data/new.etcd"))
		g.Expect(pod.Volumes).To(ContainElement(HaveField("PersistentVolumeClaim", Equal(
			&corev1.PersistentVolumeClaimVolumeSource{ClaimName: claimName, ReadOnly: true}))))
		g.Expect(pod.Containers[0].VolumeMounts).To(ContainElement(And(HaveField("MountPath", "/var/etcd/data"), HaveField("ReadOnly", true))))
	}

	runJob(t, ns, revisionJobName(0), 0, `{"revision":150,"valid":true}`)
	runJob(t, ns, revisionJobName(1), 0, `{"revision":110,"valid":true}`)
	runJob(t, ns, revisionJobName(2), 0, `{"revision":0,"valid":false,"empty":true,"reason":"no valid etcd data: holds no member directory"}`)

	// Member 0's volume is ahead of the store: it is preserved, and nothing is deleted until that is done.
	preserve := waitForJob(t, ns, preserveJobName).Spec.Template.Spec
	g.Expect(preserve.Containers[0].Args).To(ContainElements("preserve-data", "--expect-revision=150", "--storage-provider=S3",
		"--store-container=bucket", "--store-prefix=shoot--a/etcd-main"))
	g.Expect(preserve.Volumes).To(ContainElement(HaveField("PersistentVolumeClaim", Equal(
		&corev1.PersistentVolumeClaimVolumeSource{ClaimName: memberClaims[0], ReadOnly: true}))))
	g.Expect(preserve.Containers[0].Env).To(ContainElement(HaveField("Name", "AWS_APPLICATION_CREDENTIALS")))
	g.Consistently(func(g Gomega) {
		noClaimDeleted(g, ns)
	}).WithTimeout(2 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())
	g.Expect(getEtcd(g, ns).Status.LastOperation.Description).To(ContainSubstring("etcd-main-etcd-main-0"))

	runJob(t, ns, preserveJobName, 0, `{"revision":150,"snapshot":"Full-00000000-00000150-1790000000","uploaded":true}`)

	// Step 4 deletes the volumes; the Jobs are gone with the step they served.
	g.Eventually(func(g Gomega) {
		for _, name := range memberClaims {
			g.Expect(claim(g, ns, name).DeletionTimestamp).NotTo(BeNil(), name)
		}
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	for _, name := range []string{revisionJobName(0), revisionJobName(1), revisionJobName(2), preserveJobName} {
		g.Eventually(exists(ns, name, &batchv1.Job{})).WithTimeout(timeout).WithPolling(poll).Should(Satisfy(isNotFound), name)
	}
	releaseClaims(t, ns, memberClaims...)
	g.Eventually(func(g Gomega) {
		sts := statefulSet(g, ns)
		g.Expect(sts.Spec.Replicas).To(Equal(ptr.To(int32(3))))
		g.Expect(sts.Annotations).NotTo(HaveKey(decide.QuorumLossRecoveryAnnotation))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	expectCondition(t, ns, heal.ConditionTypeQuorumLossRecovery, druidv1alpha1.ConditionFalse, heal.ReasonRecoveryCompleted)

	var saved []corev1.Event
	for _, e := range etcdEvents(g, ns, heal.EventReasonQuorumLossRecovery) {
		if e.Action == "SaveSurvivingData" {
			saved = append(saved, e)
		}
	}
	g.Expect(saved).NotTo(BeEmpty())
	g.Expect(saved[len(saved)-1].Message).To(And(ContainSubstring("etcd-main-etcd-main-0"), ContainSubstring("150"),
		ContainSubstring("Full-00000000-00000150-1790000000")))
}

// A member volume that cannot be read (its data-revision Job fails) stops the recovery before anything is
// deleted: QuorumLossRecovery False/ManualInterventionRequired naming the volume, a Warning event, no
// preserve Job, no claim deleted, the phase stays SavingSurvivingData. Deleting the failed Job (what the
// message tells the operator) runs it again, and the recovery goes on once every volume is read.
func TestQuorumLossRecoveryStopsWhenASurvivingVolumeCannotBeRead(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	startQuorumLoss(t, ns, 120)

	runJob(t, ns, revisionJobName(0), 0, `{"revision":150,"valid":true}`)
	runJob(t, ns, revisionJobName(1), 1, "open /var/etcd/data/new.etcd/member/snap/db: permission denied")
	runJob(t, ns, revisionJobName(2), 0, `{"revision":0,"valid":false,"empty":true}`)

	etcd := expectCondition(t, ns, heal.ConditionTypeQuorumLossRecovery, druidv1alpha1.ConditionFalse, heal.ReasonManualInterventionRequired)
	g.Expect(druidv1alpha1.FindCondition(etcd.Status.Conditions, heal.ConditionTypeQuorumLossRecovery).Message).
		To(And(ContainSubstring(memberClaims[1]), ContainSubstring("permission denied"), ContainSubstring(revisionJobName(1))))
	g.Eventually(func(g Gomega) []corev1.Event {
		return warningEvents(g, ns, heal.EventReasonManualInterventionRequired)
	}).WithTimeout(timeout).WithPolling(poll).ShouldNot(BeEmpty())
	g.Consistently(func(g Gomega) {
		noClaimDeleted(g, ns)
		g.Expect(exists(ns, preserveJobName, &batchv1.Job{})()).To(Satisfy(isNotFound))
		g.Expect(statefulSet(g, ns).Annotations).To(HaveKeyWithValue(decide.QuorumLossRecoveryAnnotation, "SavingSurvivingData"))
		c := druidv1alpha1.FindCondition(getEtcd(g, ns).Status.Conditions, heal.ConditionTypeQuorumLossRecovery)
		g.Expect(c.Reason).To(Equal(heal.ReasonManualInterventionRequired))
	}).WithTimeout(3 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())

	// The operator fixed the volume and deletes the failed Job (as kubectl does, in the background): druid
	// runs it again.
	failed := waitForJob(t, ns, revisionJobName(1))
	g.Expect(env.Client.Delete(ctx, failed, client.PropagationPolicy(metav1.DeletePropagationBackground))).To(Succeed())
	g.Eventually(func(g Gomega) {
		job := &batchv1.Job{}
		g.Expect(exists(ns, revisionJobName(1), job)()).To(Succeed())
		g.Expect(job.UID).NotTo(Equal(failed.UID))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	runJob(t, ns, revisionJobName(1), 0, `{"revision":160,"valid":true}`)

	// Member 1 is the most advanced now.
	g.Eventually(func(g Gomega) []string { return preserveArgs(g, ns) }).WithTimeout(timeout).WithPolling(poll).Should(ContainElement("--expect-revision=160"))
	runJob(t, ns, preserveJobName, 0, `{"revision":160,"snapshot":"Full-00000000-00000160-1790000000","uploaded":true}`)
	g.Eventually(func(g Gomega) {
		for _, name := range memberClaims {
			g.Expect(claim(g, ns, name).DeletionTimestamp).NotTo(BeNil(), name)
		}
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}

// A failed upload of the most advanced volume stops the recovery too: ManualInterventionRequired naming
// the volume and the revision, and no claim is deleted.
func TestQuorumLossRecoveryStopsWhenPreservingFails(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	startQuorumLoss(t, ns, 120)
	runJob(t, ns, revisionJobName(0), 0, `{"revision":130,"valid":true}`)
	runJob(t, ns, revisionJobName(1), 0, `{"revision":150,"valid":true}`)
	runJob(t, ns, revisionJobName(2), 0, `{"revision":140,"valid":true}`)
	g.Eventually(func(g Gomega) []string { return preserveArgs(g, ns) }).WithTimeout(timeout).WithPolling(poll).Should(ContainElement("--expect-revision=150"))
	runJob(t, ns, preserveJobName, 1, "uploading the full snapshot: 503 Service Unavailable")

	etcd := expectCondition(t, ns, heal.ConditionTypeQuorumLossRecovery, druidv1alpha1.ConditionFalse, heal.ReasonManualInterventionRequired)
	g.Expect(druidv1alpha1.FindCondition(etcd.Status.Conditions, heal.ConditionTypeQuorumLossRecovery).Message).
		To(And(ContainSubstring(memberClaims[1]), ContainSubstring("150"), ContainSubstring("503 Service Unavailable")))
	g.Consistently(func(g Gomega) {
		noClaimDeleted(g, ns)
	}).WithTimeout(3 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())
	events := warningEvents(g, ns, heal.EventReasonManualInterventionRequired)
	g.Expect(slices.ContainsFunc(events, func(e corev1.Event) bool { return e.Type == corev1.EventTypeWarning })).To(BeTrue())
}

// When the store already holds the most advanced volume's revision (the backup leader's last delta went
// past it), nothing is uploaded: no preserve Job, and the volumes are deleted once every volume was read.
func TestQuorumLossRecoverySkipsPreservingWhenTheStoreIsAhead(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	startQuorumLoss(t, ns, 200)
	for i := range memberClaims {
		runJob(t, ns, revisionJobName(i), 0, `{"revision":190,"valid":true}`)
	}
	g.Eventually(func(g Gomega) {
		for _, name := range memberClaims {
			g.Expect(claim(g, ns, name).DeletionTimestamp).NotTo(BeNil(), name)
		}
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Expect(exists(ns, preserveJobName, &batchv1.Job{})()).To(Satisfy(isNotFound))
}

// preserveArgs are the arguments of the preserve-data Job.
func preserveArgs(g Gomega, ns string) []string {
	job := &batchv1.Job{}
	g.Expect(exists(ns, preserveJobName, job)()).To(Succeed())
	return job.Spec.Template.Spec.Containers[0].Args
}

// Step 4 deletes only the claims step 3 read. Here the recovery stands at step 4 with a record of step 3
// that names members 0 and 1 only, as when member 2's claim was created after the reading (by hand, or
// from a volume snapshot): nothing is deleted, a Warning event names the unread claim, and the recovery
// goes back to read every volume again; it deletes the claims once all three are read.
//
// Regression: step 4 deleted every member claim it found, read or not.
func TestQuorumLossRecoveryDeletesNoVolumeItDidNotRead(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	startQuorumLoss(t, ns, 200)
	firstReading := waitForJob(t, ns, revisionJobName(2))

	sts := statefulSet(g, ns)
	patch := client.MergeFrom(sts.DeepCopy())
	sts.Annotations[decide.QuorumLossRecoveryAnnotation] = string(decide.RecoveryDeletingVolumes)
	sts.Annotations[decide.ReadVolumesAnnotation] = fmt.Sprintf("%s=%s,%s=%s",
		memberClaims[0], claim(g, ns, memberClaims[0]).UID, memberClaims[1], claim(g, ns, memberClaims[1]).UID)
	g.Expect(env.Client.Patch(ctx, sts, patch)).To(Succeed())

	g.Eventually(func(g Gomega) {
		events := etcdEvents(g, ns, heal.EventReasonQuorumLossRecovery)
		g.Expect(events).To(ContainElement(And(HaveField("Action", "ReadVolumesAgain"), HaveField("Type", corev1.EventTypeWarning),
			HaveField("Message", ContainSubstring(memberClaims[2])))))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Eventually(func(g Gomega) {
		job := &batchv1.Job{}
		g.Expect(exists(ns, revisionJobName(2), job)()).To(Succeed())
		g.Expect(job.UID).NotTo(Equal(firstReading.UID))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	noClaimDeleted(g, ns)
	g.Expect(statefulSet(g, ns).Annotations).NotTo(HaveKey(decide.ReadVolumesAnnotation))

	for i := range memberClaims {
		runJob(t, ns, revisionJobName(i), 0, `{"revision":190,"valid":true}`)
	}
	g.Eventually(func(g Gomega) {
		for _, name := range memberClaims {
			g.Expect(claim(g, ns, name).DeletionTimestamp).NotTo(BeNil(), name)
		}
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}
