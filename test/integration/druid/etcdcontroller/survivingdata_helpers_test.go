package etcdcontroller_test

import (
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-etcd/gardener-etcd/test/support/envtest"
)

// The surviving-data Jobs of the quorum-loss recovery, named as druid names them: one data-revision Job
// per member volume (by ordinal) and one preserve-data Job for the volume druid chose.
func revisionJobName(ordinal int) string {
	return fmt.Sprintf("%s-data-revision-%d", etcdName, ordinal)
}

const preserveJobName = etcdName + "-preserve-data"

// memberClaims are the data volume claims of a three-member etcd-main.
var memberClaims = []string{"etcd-main-etcd-main-0", "etcd-main-etcd-main-1", "etcd-main-etcd-main-2"}

// waitForJob waits until druid created the named Job and returns it.
func waitForJob(t *testing.T, ns, name string) *batchv1.Job {
	t.Helper()
	job := &batchv1.Job{}
	NewWithT(t).Eventually(exists(ns, name, job)).WithTimeout(timeout).WithPolling(poll).Should(Succeed(), "job %s", name)
	return job
}

// runJob plays the Job controller and the kubelet for a Job druid created, since envtest has neither: it
// creates the Job's pod (the Job's template, its selector labels and the Job as controller owner), sets
// the pod terminated with exitCode and message as the container's termination message (what the kubelet
// reports from terminationMessagePath), and then the Job's terminal conditions.
func runJob(t *testing.T, ns, name string, exitCode int32, message string) {
	t.Helper()
	g := NewWithT(t)
	job := waitForJob(t, ns, name)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-" + string(job.UID)[:5], Namespace: ns, Labels: job.Spec.Template.Labels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: job.UID, Controller: ptr.To(true)}}},
		Spec: *job.Spec.Template.Spec.DeepCopy(),
	}
	g.Expect(env.Client.Create(ctx, pod)).To(Succeed())
	phase := corev1.PodSucceeded
	if exitCode != 0 {
		phase = corev1.PodFailed
	}
	g.Eventually(func(g Gomega) {
		current := &corev1.Pod{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(pod), current)).To(Succeed())
		current.Status.Phase = phase
		current.Status.ContainerStatuses = []corev1.ContainerStatus{{
			Name: pod.Spec.Containers[0].Name, Image: pod.Spec.Containers[0].Image,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: exitCode, Message: message,
				StartedAt: metav1.NewTime(time.Now().Add(-time.Second)), FinishedAt: metav1.Now()}},
		}}
		g.Expect(env.Client.Status().Update(ctx, current)).To(Succeed())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	finishJob(t, job, exitCode == 0)
}

// finishJob ends the Job as the Job controller would.
func finishJob(t *testing.T, job *batchv1.Job, succeeded bool) {
	t.Helper()
	out := envtest.JobOutcome{Succeeded: succeeded, Failed: 1, Reason: "BackoffLimitExceeded"}
	if succeeded {
		out.Reason = "CompletionsReached"
	}
	NewWithT(t).Eventually(func() error { return env.FinishJob(ctx, job, out) }).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}

// setBackupRevision renews the delta snapshot lease with revision as its holder, as the backup leader's
// sidecar does after a delta snapshot: the newest revision the backup store holds.
func setBackupRevision(t *testing.T, ns string, revision int64) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		lease := &coordinationv1.Lease{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: etcdName + "-delta-snap"}, lease)).To(Succeed())
		lease.Spec.HolderIdentity = ptr.To(fmt.Sprint(revision))
		lease.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
		g.Expect(env.Client.Update(ctx, lease)).To(Succeed())
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}

// noClaimDeleted fails g, and stops an Eventually at once, when a member claim is being deleted: the
// surviving-data step must come before any volume is deleted.
func noClaimDeleted(g Gomega, ns string) {
	for _, name := range memberClaims {
		if claim(g, ns, name).DeletionTimestamp != nil {
			StopTrying(fmt.Sprintf("data volume %s was deleted before what it holds was read and saved", name)).Now()
		}
	}
}

// startQuorumLoss builds a three-member cluster with an S3 store and the member claims, loses members 1
// and 2 and waits for step 1 (StatefulSet at 0, marked); then the pods go, as the StatefulSet controller
// removes them.
func startQuorumLoss(t *testing.T, ns string, backupRevision int64) {
	t.Helper()
	g := NewWithT(t)
	createSecret(t, ns, "etcd-backup", "accessKeyID", "secretAccessKey", "region")
	s := healthyCluster(t, ns, 3, withS3Store)
	if backupRevision > 0 {
		setBackupRevision(t, ns, backupRevision)
	}
	for _, name := range memberClaims {
		createClaim(t, ns, name)
	}
	failMember(t, ns, s, 1)
	failMember(t, ns, s, 2)
	g.Eventually(func(g Gomega) {
		g.Expect(statefulSet(g, ns).Spec.Replicas).To(Equal(ptr.To(int32(0))))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	s.stop("etcd-main-0")
	deletePods(t, ns, "etcd-main-0", "etcd-main-1", "etcd-main-2")
}
