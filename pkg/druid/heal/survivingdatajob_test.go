package heal

import (
	"testing"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/heal/decide"
	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
)

func survivingDataEtcd(customize ...func(*druidv1alpha1.Etcd)) *druidv1alpha1.Etcd {
	etcd := &druidv1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: "shoot", UID: "etcd-uid"},
		Spec: druidv1alpha1.EtcdSpec{Replicas: 3, Backup: druidv1alpha1.BackupSpec{Store: &druidv1alpha1.StoreSpec{
			Prefix: "p", Container: ptr.To("bucket"), Provider: ptr.To(druidv1alpha1.StorageProviderS3),
			SecretRef: &corev1.SecretReference{Name: "etcd-backup"}}}}}
	for _, c := range customize {
		c(etcd)
	}
	druidv1alpha1.SetDefaults(etcd)
	return etcd
}

var survivingClaim = &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main-etcd-main-1", UID: "claim-uid"}}

// Both Jobs mount the claim read-only at the etcd pods' data path, run hardened (non-root, no token, no
// privilege escalation, no capabilities, read-only root file system with emptyDirs for the copy and
// /tmp, RuntimeDefault seccomp) and report through the termination message; their pods never carry
// part-of, so they never count as member pods.
func TestSurvivingDataJobsAreReadOnlyAndHardened(t *testing.T) {
	g := NewWithT(t)
	etcd := survivingDataEtcd()
	in := survivingDataJobInput{image: "example.org/etcdbrctl:v1"}
	for _, job := range []*batchv1.Job{newRevisionJob(etcd, survivingClaim, 1, in), newPreserveJob(etcd, survivingClaim, 150, in)} {
		pod := job.Spec.Template.Spec
		g.Expect(job.Annotations).To(HaveKeyWithValue(AnnotationDataVolumeUID, "claim-uid"))
		g.Expect(job.OwnerReferences).To(ConsistOf(HaveField("UID", types.UID("etcd-uid"))))
		g.Expect(job.Spec.Template.Labels).NotTo(HaveKey(druidv1alpha1.LabelPartOfKey))
		g.Expect(pod.RestartPolicy).To(Equal(corev1.RestartPolicyNever))
		g.Expect(pod.AutomountServiceAccountToken).To(Equal(ptr.To(false)))
		g.Expect(pod.SecurityContext.RunAsNonRoot).To(Equal(ptr.To(true)))
		g.Expect(pod.SecurityContext.RunAsUser).To(Equal(ptr.To(druidv1alpha1.DefaultRunAsUser)))
		g.Expect(pod.SecurityContext.SeccompProfile.Type).To(Equal(corev1.SeccompProfileTypeRuntimeDefault))
		g.Expect(pod.Volumes).To(ContainElement(HaveField("PersistentVolumeClaim",
			Equal(&corev1.PersistentVolumeClaimVolumeSource{ClaimName: "etcd-main-etcd-main-1", ReadOnly: true}))))
		g.Expect(pod.Containers).To(HaveLen(1))
		c := pod.Containers[0]
		g.Expect(c.Image).To(Equal("example.org/etcdbrctl:v1"))
		g.Expect(c.SecurityContext.AllowPrivilegeEscalation).To(Equal(ptr.To(false)))
		g.Expect(c.SecurityContext.ReadOnlyRootFilesystem).To(Equal(ptr.To(true)))
		g.Expect(c.SecurityContext.Capabilities.Drop).To(ConsistOf(corev1.Capability("ALL")))
		g.Expect(c.TerminationMessagePath).To(Equal(corev1.TerminationMessagePathDefault))
		g.Expect(c.TerminationMessagePolicy).To(Equal(corev1.TerminationMessageFallbackToLogsOnError))
		g.Expect(c.Args).To(ContainElements("--data-dir=/var/etcd/data/new.etcd", "--scratch-dir=/var/etcd/scratch",
			"--termination-message-path=/dev/termination-log"))
		for _, m := range c.VolumeMounts {
			g.Expect(m.ReadOnly || m.MountPath == "/tmp" || m.MountPath == "/var/etcd/scratch").To(BeTrue(), "%s is writable", m.MountPath)
		}
		g.Expect(c.VolumeMounts).To(ContainElements(HaveField("MountPath", "/tmp"), HaveField("MountPath", "/var/etcd/scratch")))
	}

	revision := newRevisionJob(etcd, survivingClaim, 1, in)
	g.Expect(revision.Name).To(Equal("etcd-main-data-revision-1"))
	g.Expect(revision.Spec.Template.Spec.Containers[0].Args[0]).To(Equal("data-revision"))
	g.Expect(revision.Spec.Template.Spec.Containers[0].Env).To(BeEmpty(), "reading a volume needs no store credentials")

	preserve := newPreserveJob(etcd, survivingClaim, 150, in)
	g.Expect(preserve.Name).To(Equal("etcd-main-preserve-data"))
	g.Expect(preserve.Annotations).To(HaveKeyWithValue(AnnotationExpectRevision, "150"))
	g.Expect(preserve.Spec.Template.Spec.Containers[0].Args).To(ContainElements("preserve-data", "--expect-revision=150",
		"--storage-provider=S3", "--store-container=bucket", "--store-prefix=p"))
	g.Expect(preserve.Spec.Template.Spec.Containers[0].Env).To(ContainElement(HaveField("Name", "AWS_APPLICATION_CREDENTIALS")))
	g.Expect(preserve.Spec.Template.Labels).To(HaveKeyWithValue("networking.gardener.cloud/to-public-networks", "allowed"))
}

// An Etcd whose pods run as root has a data directory only root can read: the Jobs run as the image's
// user then, still without capabilities and with the read-only root file system.
func TestSurvivingDataJobOfARootEtcd(t *testing.T) {
	g := NewWithT(t)
	etcd := survivingDataEtcd(func(e *druidv1alpha1.Etcd) { e.Spec.RunAsRoot = ptr.To(true) })
	pod := newRevisionJob(etcd, survivingClaim, 0, survivingDataJobInput{image: "i"}).Spec.Template.Spec
	g.Expect(pod.SecurityContext.RunAsNonRoot).To(BeNil())
	g.Expect(pod.SecurityContext.SeccompProfile.Type).To(Equal(corev1.SeccompProfileTypeRuntimeDefault))
	g.Expect(pod.Containers[0].SecurityContext.Capabilities.Drop).To(ConsistOf(corev1.Capability("ALL")))
}

// A Job's result: running until a terminal condition; the message of its own pod (by controller
// reference); a completed Job without message, a failed Job, or a result that is no reading, are
// failures — what the volume holds is then unknown.
func TestSurvivingDataJobResults(t *testing.T) {
	g := NewWithT(t)
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "j", UID: "job-uid"}}
	withCondition := func(t batchv1.JobConditionType, reason string) *batchv1.Job {
		j := job.DeepCopy()
		j.Status.Conditions = []batchv1.JobCondition{{Type: t, Status: corev1.ConditionTrue, Reason: reason}}
		return j
	}
	pod := func(owner types.UID, phase corev1.PodPhase, exit int32, message string) corev1.Pod {
		return corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{{UID: owner, Controller: ptr.To(true)}}},
			Status: corev1.PodStatus{Phase: phase, ContainerStatuses: []corev1.ContainerStatus{{Name: containerSurvivingData,
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: exit, Message: message}}}}},
		}
	}
	ok := `{"revision":150,"valid":true}`

	g.Expect(resultOf(job, []corev1.Pod{pod("job-uid", corev1.PodSucceeded, 0, ok)})).To(Equal(jobResult{}))
	complete := withCondition(batchv1.JobComplete, "CompletionsReached")
	g.Expect(resultOf(complete, []corev1.Pod{pod("job-uid", corev1.PodSucceeded, 0, ok)})).To(Equal(jobResult{done: true, message: ok}))
	g.Expect(resultOf(complete, []corev1.Pod{pod("other-job", corev1.PodSucceeded, 0, ok)}).failed).To(BeTrue(), "another Job's pod")
	g.Expect(resultOf(complete, []corev1.Pod{pod("job-uid", corev1.PodSucceeded, 0, "")}).failed).To(BeTrue(), "no termination message")
	failed := resultOf(withCondition(batchv1.JobFailed, "DeadlineExceeded"), []corev1.Pod{pod("job-uid", corev1.PodFailed, 1, "permission denied")})
	g.Expect(failed.failed).To(BeTrue())
	g.Expect(failed.message).To(And(ContainSubstring("DeadlineExceeded"), ContainSubstring("permission denied")))

	g.Expect(parseDataRevision("c", jobResult{})).To(Equal(decide.VolumeReading{Claim: "c"}))
	g.Expect(parseDataRevision("c", jobResult{done: true, message: ok})).To(Equal(
		decide.VolumeReading{Claim: "c", State: decide.ReadingDone, Revision: 150, Valid: true}))
	g.Expect(parseDataRevision("c", jobResult{done: true, message: `{"revision":0,"valid":false,"empty":true,"reason":"none"}`})).To(Equal(
		decide.VolumeReading{Claim: "c", State: decide.ReadingDone, Empty: true, Problem: "none"}))
	g.Expect(parseDataRevision("c", jobResult{done: true, message: `{"revision":0,"valid":false,"empty":true,"movedAside":["/d.invalid-1"]}`}).MovedAside).To(
		Equal([]string{"/d.invalid-1"}))
	for _, bad := range []string{"", "not json", `{"valid":true}`, `{"revision":0,"valid":true}`} {
		g.Expect(parseDataRevision("c", jobResult{done: true, message: bad}).State).To(Equal(decide.ReadingFailed), bad)
	}

	p, err := parsePreserved(`{"revision":150,"snapshot":"Full-00000000-00000150-1","uploaded":true}`, 150)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(p).To(Equal(podwire.PreservedData{Revision: 150, Snapshot: "Full-00000000-00000150-1", Uploaded: true}))
	_, err = parsePreserved(`{"revision":140,"snapshot":"Full-00000000-00000140-1"}`, 150)
	g.Expect(err).To(MatchError(ContainSubstring("not 150")))
	_, err = parsePreserved(`{"revision":150}`, 150)
	g.Expect(err).To(HaveOccurred())
}
