package compaction

import (
	"slices"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
)

// The compaction metrics, under upstream etcd-druid's names.
const (
	jobsTotal   = "etcddruid_compaction_jobs_total"
	jobsCurrent = "etcddruid_compaction_jobs_current"
	jobDuration = "etcddruid_compaction_job_duration_seconds"
	deltaEvents = "etcddruid_compaction_num_delta_events"
)

var (
	succeeded = []string{"succeeded", "true"}
	failed    = []string{"succeeded", "false"}
)

func TestBelowThresholdNoJob(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	etcd := createEtcd(t, ns, ptr.To(int64(100)))
	setRevisions(t, etcd, 1000, 1099)

	g.Eventually(metric(deltaEvents, etcd)).WithTimeout(timeout).WithPolling(poll).Should(Equal(99.0))
	g.Consistently(jobs(ns)).WithTimeout(settle).WithPolling(poll).Should(BeEmpty())
	g.Expect(metric(jobsCurrent, etcd)(g)).To(Equal(-1.0), "no Job, no series")
}

func TestDefaultThresholdApplies(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	etcd := createEtcd(t, ns, nil)
	setRevisions(t, etcd, 1, 1_000_000) // 999,999 events: one short of the default

	g.Eventually(metric(deltaEvents, etcd)).WithTimeout(timeout).WithPolling(poll).Should(Equal(999_999.0))
	g.Consistently(jobs(ns)).WithTimeout(settle).WithPolling(poll).Should(BeEmpty())

	setRevision(t, ns, druidv1alpha1.DeltaSnapshotLeaseName(etcd), 1_000_001)
	waitForJob(t, etcd)
}

func TestAtThresholdJobWithExactShape(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	etcd := createEtcd(t, ns, ptr.To(int64(100)))
	setRevisions(t, etcd, 1000, 1100)

	job := waitForJob(t, etcd)
	g.Expect(job.Labels).To(Equal(map[string]string{
		"app.kubernetes.io/managed-by": "etcd-druid", "app.kubernetes.io/part-of": "etcd-main",
		"app.kubernetes.io/component": "etcd-compactor", "app.kubernetes.io/name": "etcd-main-compactor",
	}))
	g.Expect(job.OwnerReferences).To(ConsistOf(metav1.OwnerReference{
		APIVersion: "druid.gardener.cloud/v1alpha1", Kind: "Etcd", Name: etcd.Name, UID: etcd.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}))
	g.Expect(job.Spec.BackoffLimit).To(Equal(ptr.To(int32(1))))
	g.Expect(job.Spec.ActiveDeadlineSeconds).To(Equal(ptr.To(int64(1800))))

	pod := job.Spec.Template
	for k, v := range map[string]string{
		"app.kubernetes.io/managed-by": "etcd-druid", "app.kubernetes.io/component": "etcd-compactor",
		"app.kubernetes.io/name":           "etcd-main-compactor",
		"networking.gardener.cloud/to-dns": "allowed", "networking.gardener.cloud/to-private-networks": "allowed",
		"networking.gardener.cloud/to-public-networks": "allowed",
	} {
		g.Expect(pod.Labels).To(HaveKeyWithValue(k, v))
	}
	g.Expect(pod.Labels).NotTo(HaveKey("app.kubernetes.io/part-of"), "the pod must not match the etcd Services' selector")
	g.Expect(pod.Spec.RestartPolicy).To(Equal(corev1.RestartPolicyNever))
	g.Expect(pod.Spec.ServiceAccountName).To(Equal("etcd-main"))
	g.Expect(pod.Spec.SecurityContext.RunAsNonRoot).To(Equal(ptr.To(true)))
	g.Expect(pod.Spec.SecurityContext.RunAsUser).To(Equal(ptr.To(int64(65532))))
	g.Expect(pod.Spec.Volumes).To(Equal([]corev1.Volume{
		{Name: "compaction-data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "etcd-backup", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "etcd-backup", DefaultMode: ptr.To(int32(0o644))}}},
	}))

	g.Expect(pod.Spec.Containers).To(HaveLen(1))
	c := pod.Spec.Containers[0]
	g.Expect(c.Name).To(Equal("compactor"))
	g.Expect(c.Image).To(Equal(testImage))
	g.Expect(c.Args).To(Equal([]string{
		"compact",
		"--data-dir=/var/etcd/data/compaction.etcd",
		"--enable-snapshot-lease-renewal=true",
		"--full-snapshot-lease-name=etcd-main-full-snap",
		"--delta-snapshot-lease-name=etcd-main-delta-snap",
		"--storage-provider=S3",
		"--store-container=bucket",
		"--store-prefix=shoot--dev--x/etcd-main",
		"--store-endpoint-override=http://127.0.0.1:9000",
		"--etcd-snapshot-timeout=20m0s",
		"--etcd-defrag-timeout=15m0s",
	}))
	g.Expect(c.VolumeMounts).To(Equal([]corev1.VolumeMount{
		{Name: "compaction-data", MountPath: "/var/etcd/data"},
		{Name: "etcd-backup", MountPath: "/var/etcd-backup", ReadOnly: true},
	}))
	g.Expect(c.Env).To(ContainElement(corev1.EnvVar{Name: "AWS_APPLICATION_CREDENTIALS", Value: "/var/etcd-backup"}))
	g.Expect(c.Resources.Requests).To(Equal(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("600m"), corev1.ResourceMemory: resource.MustParse("1Gi")}))
	g.Expect(c.SecurityContext.AllowPrivilegeEscalation).To(Equal(ptr.To(false)))

	g.Eventually(metric(jobsCurrent, etcd)).WithTimeout(timeout).WithPolling(poll).Should(Equal(1.0))
	g.Expect(metric(deltaEvents, etcd)(g)).To(Equal(100.0))
	g.Eventually(eventReasons(ns, etcd.Name)).WithTimeout(timeout).WithPolling(poll).Should(ContainElement("CompactionJobCreated"))
}

func TestOnlyOneJobWhileRunning(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	etcd := createEtcd(t, ns, ptr.To(int64(100)))
	setRevisions(t, etcd, 1000, 1100)
	job := waitForJob(t, etcd)

	// More deltas arrive while the Job runs; each lease update triggers a reconcile.
	for rev := int64(1200); rev <= 1500; rev += 100 {
		setRevision(t, ns, druidv1alpha1.DeltaSnapshotLeaseName(etcd), rev)
	}
	g.Eventually(metric(deltaEvents, etcd)).WithTimeout(timeout).WithPolling(poll).Should(Equal(500.0))
	g.Consistently(jobs(ns)).WithTimeout(settle).WithPolling(poll).Should(ConsistOf(
		HaveField("ObjectMeta.UID", job.UID)))
	g.Expect(metric(jobsCurrent, etcd)(g)).To(Equal(1.0))
	g.Expect(metric(jobsTotal, etcd, succeeded...)(g)).To(Equal(-1.0), "no Job finished")
}

func TestSucceededJobSetsConditionAndIsDeleted(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	etcd := createEtcd(t, ns, ptr.To(int64(100)))
	setRevisions(t, etcd, 1000, 1100)
	job := waitForJob(t, etcd)

	// The compactor uploads a full snapshot at the latest revision and renews the full snapshot lease.
	setRevision(t, ns, druidv1alpha1.FullSnapshotLeaseName(etcd), 1100)
	finishJob(t, job, true, "CompletionsReached", "Reached expected number of succeeded pods")

	g.Eventually(compactionCondition(etcd)).WithTimeout(timeout).WithPolling(poll).Should(And(
		HaveField("Status", druidv1alpha1.ConditionTrue),
		HaveField("Reason", "None"),
	))
	expectJobGone(t, job)
	g.Eventually(metric(jobsTotal, etcd, append(succeeded, "failureReason", "none")...)).WithTimeout(timeout).WithPolling(poll).Should(Equal(1.0))
	g.Expect(metric(jobsCurrent, etcd)(g)).To(Equal(0.0))
	g.Expect(metric(jobDuration, etcd, append(succeeded, "failureReason", "none")...)(g)).To(Equal(1.0), "one observation")
	g.Eventually(metric(deltaEvents, etcd)).WithTimeout(timeout).WithPolling(poll).Should(Equal(0.0))
	g.Consistently(jobs(ns)).WithTimeout(settle).WithPolling(poll).Should(BeEmpty(), "below the threshold again")
	g.Expect(metric(jobsTotal, etcd, failed...)(g)).To(Equal(-1.0))
}

func TestFailedJobSetsConditionEmitsWarningAndRetriesAfterBackoff(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	etcd := createEtcd(t, ns, ptr.To(int64(100)))
	setRevisions(t, etcd, 1000, 1100)
	job := waitForJob(t, etcd)

	// Taken before the failure is written, so that the controller's failure time (the condition's
	// lastUpdateTime, from which the back-off counts) is never earlier than failedAt, however long this
	// goroutine waits for the CPU after the write.
	// Its pod was evicted: the failure is counted with failureReason evicted, as upstream druid does.
	failedPod(t, job, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "EvictionByEvictionAPI"})
	failedAt := time.Now()
	finishJob(t, job, false, "BackoffLimitExceeded", "Job has reached the specified backoff limit")

	g.Eventually(compactionCondition(etcd)).WithTimeout(timeout).WithPolling(poll).Should(And(
		HaveField("Status", druidv1alpha1.ConditionFalse),
		HaveField("Reason", "EvictionByEvictionAPI"),
		HaveField("Message", ContainSubstring("Job has reached the specified backoff limit")),
	))
	g.Eventually(eventReasons(ns, etcd.Name)).WithTimeout(timeout).WithPolling(poll).Should(ContainElement("CompactionJobFailed"))
	expectJobGone(t, job)
	evicted := slices.Concat(failed, []string{"failureReason", "evicted"})
	g.Eventually(metric(jobsTotal, etcd, evicted...)).WithTimeout(timeout).WithPolling(poll).Should(Equal(1.0))
	g.Expect(metric(jobDuration, etcd, evicted...)(g)).To(Equal(1.0), "one observation")
	g.Expect(metric(jobsCurrent, etcd)(g)).To(Equal(0.0))

	// Still above the threshold: no new Job during the back-off, one after it. On a busy machine the waits
	// above can outlast the back-off; the retry may then exist already and only its creation time tells.
	if remaining := time.Until(failedAt.Add(retryBackoff - time.Second)); remaining > 0 {
		g.Consistently(jobs(ns)).WithTimeout(remaining).WithPolling(poll).Should(BeEmpty())
	}
	retried := waitForJob(t, etcd)
	g.Expect(retried.UID).NotTo(Equal(job.UID))
	g.Expect(retried.CreationTimestamp.Time).To(BeTemporally(">=", failedAt.Add(retryBackoff-time.Second).Truncate(time.Second)))
	// The controller counts the Job after its create returned, which can be after the test saw the Job.
	g.Eventually(metric(jobsCurrent, etcd)).WithTimeout(timeout).WithPolling(poll).Should(Equal(1.0))
	g.Expect(metric(jobsTotal, etcd, failed...)(g)).To(Equal(1.0))
}

func TestDeletedEtcdDropsItsMetrics(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	etcd := createEtcd(t, ns, ptr.To(int64(100)))
	setRevisions(t, etcd, 1000, 1050)
	g.Eventually(metric(deltaEvents, etcd)).WithTimeout(timeout).WithPolling(poll).Should(Equal(50.0))

	g.Expect(env.Client.Delete(ctx, etcd)).To(Succeed())
	g.Eventually(metric(deltaEvents, etcd)).WithTimeout(timeout).WithPolling(poll).Should(Equal(-1.0))
}
