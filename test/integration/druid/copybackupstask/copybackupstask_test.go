package copybackupstask

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/test/support/envtest"
)

const (
	timeout = 20 * time.Second
	poll    = 100 * time.Millisecond
)

var ctx = context.Background()

// createTask stores a task copying from a GCS source to an S3 target (as after a migration between
// providers), with every optional setting.
func createTask(t *testing.T, namespace string) *druidv1alpha1.EtcdCopyBackupsTask {
	t.Helper()
	task := &druidv1alpha1.EtcdCopyBackupsTask{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "etcd-main-copy"},
		Spec: druidv1alpha1.EtcdCopyBackupsTaskSpec{
			PodLabels: map[string]string{"networking.gardener.cloud/to-public-networks": "allowed"},
			SourceStore: druidv1alpha1.StoreSpec{
				Container: ptr.To("old-bucket"), Prefix: "shoot--dev--x/etcd-main", Provider: ptr.To(druidv1alpha1.StorageProviderGCP),
				SecretRef: &corev1.SecretReference{Name: "source-etcd-backup"}, EndpointOverride: ptr.To("http://127.0.0.1:4443"),
			},
			TargetStore: druidv1alpha1.StoreSpec{
				Container: ptr.To("new-bucket"), Prefix: "shoot--dev--x/etcd-main", Provider: ptr.To(druidv1alpha1.StorageProviderS3),
				SecretRef: &corev1.SecretReference{Name: "etcd-backup"},
			},
			MaxBackupAge:         ptr.To(uint32(3)),
			MaxBackups:           ptr.To(uint32(5)),
			WaitForFinalSnapshot: &druidv1alpha1.WaitForFinalSnapshotSpec{Enabled: true, Timeout: &metav1.Duration{Duration: 10 * time.Minute}},
		},
	}
	NewWithT(t).Expect(env.Client.Create(ctx, task)).To(Succeed())
	return task
}

func waitForJob(t *testing.T, task *druidv1alpha1.EtcdCopyBackupsTask) *batchv1.Job {
	t.Helper()
	job := &batchv1.Job{}
	NewWithT(t).Eventually(func() error {
		return env.Client.Get(ctx, client.ObjectKey{Namespace: task.Namespace, Name: task.Name + "-worker"}, job)
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	return job
}

// finishJob ends the Job as the Job controller would.
func finishJob(t *testing.T, job *batchv1.Job, succeeded bool, reason, message string) {
	t.Helper()
	out := envtest.JobOutcome{Succeeded: succeeded, Failed: 4, Reason: reason, Message: message}
	NewWithT(t).Eventually(func() error { return env.FinishJob(ctx, job, out) }).WithTimeout(timeout).Should(Succeed())
}

// status reads the stored task's status.
func status(task *druidv1alpha1.EtcdCopyBackupsTask) func(g Gomega) druidv1alpha1.EtcdCopyBackupsTaskStatus {
	return func(g Gomega) druidv1alpha1.EtcdCopyBackupsTaskStatus {
		stored := &druidv1alpha1.EtcdCopyBackupsTask{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(task), stored)).To(Succeed())
		return stored.Status
	}
}

func haveCondition(t druidv1alpha1.ConditionType, s druidv1alpha1.ConditionStatus, reason string) OmegaMatcher {
	return WithTransform(func(st druidv1alpha1.EtcdCopyBackupsTaskStatus) *druidv1alpha1.Condition {
		return druidv1alpha1.FindCondition(st.Conditions, t)
	}, And(Not(BeNil()), HaveField("Status", s), HaveField("Reason", reason)))
}

func TestWorkerJobRunsCopyWithBothStores(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	task := createTask(t, ns)
	job := waitForJob(t, task)

	g.Expect(job.Labels).To(Equal(map[string]string{
		"app.kubernetes.io/managed-by": "etcd-druid", "app.kubernetes.io/component": "etcd-copy-backups-task",
		"app.kubernetes.io/name": "etcd-main-copy-worker",
	}))
	g.Expect(job.OwnerReferences).To(ConsistOf(metav1.OwnerReference{
		APIVersion: "druid.gardener.cloud/v1alpha1", Kind: "EtcdCopyBackupsTask", Name: task.Name, UID: task.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}))
	pod := job.Spec.Template
	g.Expect(pod.Labels).To(HaveKeyWithValue("networking.gardener.cloud/to-public-networks", "allowed"), "spec.podLabels")
	g.Expect(pod.Labels).To(HaveKeyWithValue("app.kubernetes.io/component", "etcd-copy-backups-task"))
	g.Expect(pod.Spec.RestartPolicy).To(Equal(corev1.RestartPolicyNever))
	g.Expect(pod.Spec.SecurityContext.RunAsNonRoot).To(Equal(ptr.To(true)))
	g.Expect(pod.Spec.Volumes).To(Equal([]corev1.Volume{
		{Name: "etcd-backup", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "etcd-backup", DefaultMode: ptr.To(int32(0o644))}}},
		{Name: "source-etcd-backup", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "source-etcd-backup", DefaultMode: ptr.To(int32(0o644))}}},
	}))
	g.Expect(pod.Spec.Containers).To(HaveLen(1))
	c := pod.Spec.Containers[0]
	g.Expect(c.Image).To(Equal(testImage))
	g.Expect(c.Args).To(Equal([]string{
		"copy",
		"--storage-provider=S3",
		"--store-container=new-bucket",
		"--store-prefix=shoot--dev--x/etcd-main",
		"--source-storage-provider=GCS",
		"--source-store-container=old-bucket",
		"--source-store-prefix=shoot--dev--x/etcd-main",
		"--source-store-endpoint-override=http://127.0.0.1:4443",
		"--max-backup-age=3",
		"--max-backups-to-copy=5",
		"--wait-for-final-snapshot=true",
		"--wait-for-final-snapshot-timeout=10m0s",
	}))
	g.Expect(c.VolumeMounts).To(Equal([]corev1.VolumeMount{
		{Name: "etcd-backup", MountPath: "/var/etcd-backup", ReadOnly: true},
		{Name: "source-etcd-backup", MountPath: "/var/.source-gcp", ReadOnly: true},
	}))
	g.Expect(c.Env).To(Equal([]corev1.EnvVar{
		{Name: "AWS_APPLICATION_CREDENTIALS", Value: "/var/etcd-backup"},
		{Name: "SOURCE_GOOGLE_APPLICATION_CREDENTIALS", Value: "/var/.source-gcp/serviceaccount.json"},
	}))

	stored := &druidv1alpha1.EtcdCopyBackupsTask{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(task), stored)).To(Succeed())
	g.Expect(stored.Finalizers).To(ContainElement(druidv1alpha1.FinalizerName))
	g.Eventually(status(task)).WithTimeout(timeout).WithPolling(poll).Should(And(
		haveCondition(druidv1alpha1.EtcdCopyBackupsTaskSucceeded, druidv1alpha1.ConditionFalse, "CopyJobRunning"),
		haveCondition(druidv1alpha1.EtcdCopyBackupsTaskFailed, druidv1alpha1.ConditionFalse, "CopyJobRunning"),
		HaveField("ObservedGeneration", Equal(ptr.To(stored.Generation))),
	))
}

func TestCompletedJobMarksTaskSucceeded(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	task := createTask(t, ns)
	job := waitForJob(t, task)

	finishJob(t, job, true, "CompletionsReached", "Reached expected number of succeeded pods")
	g.Eventually(status(task)).WithTimeout(timeout).WithPolling(poll).Should(And(
		haveCondition(druidv1alpha1.EtcdCopyBackupsTaskSucceeded, druidv1alpha1.ConditionTrue, "CopyJobSucceeded"),
		haveCondition(druidv1alpha1.EtcdCopyBackupsTaskFailed, druidv1alpha1.ConditionFalse, "CopyJobSucceeded"),
		HaveField("LastError", BeNil()),
	))
}

func TestFailedJobMarksTaskFailedWithLastError(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	task := createTask(t, ns)
	job := waitForJob(t, task)

	finishJob(t, job, false, "BackoffLimitExceeded", "Job has reached the specified backoff limit")
	g.Eventually(status(task)).WithTimeout(timeout).WithPolling(poll).Should(And(
		haveCondition(druidv1alpha1.EtcdCopyBackupsTaskFailed, druidv1alpha1.ConditionTrue, "BackoffLimitExceeded"),
		haveCondition(druidv1alpha1.EtcdCopyBackupsTaskSucceeded, druidv1alpha1.ConditionFalse, "BackoffLimitExceeded"),
		HaveField("LastError", HaveValue(ContainSubstring("Job has reached the specified backoff limit"))),
	))
	g.Eventually(func(g Gomega) []string {
		list := &eventsv1.EventList{}
		g.Expect(env.Client.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		var reasons []string
		for _, e := range list.Items {
			if e.Regarding.Name == task.Name && e.Type == corev1.EventTypeWarning {
				reasons = append(reasons, e.Reason)
			}
		}
		return reasons
	}).WithTimeout(timeout).WithPolling(poll).Should(ContainElement("CopyJobFailed"))
}

func TestFinishedTaskIsNotCopiedAgainWhenItsJobIsRemoved(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	task := createTask(t, ns)
	job := waitForJob(t, task)
	finishJob(t, job, true, "CompletionsReached", "done")
	g.Eventually(status(task)).WithTimeout(timeout).WithPolling(poll).Should(
		haveCondition(druidv1alpha1.EtcdCopyBackupsTaskSucceeded, druidv1alpha1.ConditionTrue, "CopyJobSucceeded"))

	g.Expect(env.Client.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground))).To(Succeed())
	g.Consistently(func() error {
		return env.Client.Get(ctx, client.ObjectKeyFromObject(job), &batchv1.Job{})
	}).WithTimeout(2 * time.Second).WithPolling(poll).Should(Satisfy(apierrors.IsNotFound))
}

func TestDeletingTheTaskDeletesItsJob(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	task := createTask(t, ns)
	job := waitForJob(t, task)
	g.Eventually(func(g Gomega) []string {
		stored := &druidv1alpha1.EtcdCopyBackupsTask{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(task), stored)).To(Succeed())
		return stored.Finalizers
	}).WithTimeout(timeout).Should(ContainElement(druidv1alpha1.FinalizerName))

	g.Expect(env.Client.Delete(ctx, task)).To(Succeed())
	// No garbage collector runs in envtest: the Job disappears only because the controller deletes it.
	g.Eventually(func() error {
		return env.Client.Get(ctx, client.ObjectKeyFromObject(job), &batchv1.Job{})
	}).WithTimeout(timeout).WithPolling(poll).Should(Satisfy(apierrors.IsNotFound))
	g.Eventually(func() error {
		return env.Client.Get(ctx, client.ObjectKeyFromObject(task), &druidv1alpha1.EtcdCopyBackupsTask{})
	}).WithTimeout(timeout).WithPolling(poll).Should(Satisfy(apierrors.IsNotFound))
}
