package compaction

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/imagecaps"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/storeaccess"
)

func TestLeaseRevisionAndDeltaEvents(t *testing.T) {
	g := NewWithT(t)
	lease := func(holder *string) *coordinationv1.Lease {
		return &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{HolderIdentity: holder}}
	}
	for holder, want := range map[string]int64{"0": 0, "1234567": 1234567} {
		rev, ok := leaseRevision(lease(ptr.To(holder)))
		g.Expect(ok).To(BeTrue(), holder)
		g.Expect(rev).To(Equal(want))
	}
	for _, holder := range []*string{nil, ptr.To(""), ptr.To("abc"), ptr.To("-3"), ptr.To("12:Leader")} {
		_, ok := leaseRevision(lease(holder))
		g.Expect(ok).To(BeFalse(), "%v", holder)
	}
	g.Expect(deltaEvents(100, 1100)).To(Equal(int64(1000)))
	g.Expect(deltaEvents(2000, 1100)).To(BeZero(), "a full snapshot newer than the last delta leaves nothing to replay")
}

func TestLocalStoreJobMountsTheHostDirectoryAtHome(t *testing.T) {
	g := NewWithT(t)
	etcd := &druidv1alpha1.Etcd{ObjectMeta: metav1.ObjectMeta{Name: "etcd-main", Namespace: "shoot"}}
	etcd.Spec.Backup.Store = &druidv1alpha1.StoreSpec{Prefix: "p", Provider: ptr.To(druidv1alpha1.StorageProviderLocal)}
	druidv1alpha1.SetDefaults(etcd)

	local, err := storeaccess.LocalStoreVolume(volumeLocalStore, "/srv/buckets", etcd.Spec.Backup.Store, storeaccess.EtcdContainerField,
		config.LocalBackup{AllowedHostPaths: []string{"/srv/buckets"}})
	g.Expect(err).NotTo(HaveOccurred())
	job := newJob(etcd, jobInput{image: "img", caps: imagecaps.AllOurs.BackupRestore, activeDeadline: time.Hour, local: local})
	pod := job.Spec.Template.Spec
	g.Expect(pod.Volumes).To(ContainElement(corev1.Volume{Name: "local-backup", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{
		Path: "/srv/buckets", Type: ptr.To(corev1.HostPathDirectoryOrCreate)}}}))
	g.Expect(pod.Containers[0].VolumeMounts).To(ContainElement(corev1.VolumeMount{Name: "local-backup", MountPath: "/home/nonroot/default.bkp", SubPath: "default.bkp"}))
	g.Expect(pod.Containers[0].Env).To(ContainElement(corev1.EnvVar{Name: "HOME", Value: "/home/nonroot"}))
	g.Expect(pod.Containers[0].Args).To(ContainElement("--storage-provider=Local"))
}

func TestOutcomeOfReadsTerminalConditionsOnly(t *testing.T) {
	g := NewWithT(t)
	job := &batchv1.Job{}
	out, _ := outcomeOf(job)
	g.Expect(out).To(Equal(jobRunning))

	job.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionFalse}}
	out, _ = outcomeOf(job)
	g.Expect(out).To(Equal(jobRunning), "a False condition is not an outcome")

	job.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "DeadlineExceeded"}}
	out, cond := outcomeOf(job)
	g.Expect(out).To(Equal(jobFailed))
	g.Expect(cond.Reason).To(Equal("DeadlineExceeded"))

	job.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
	out, _ = outcomeOf(job)
	g.Expect(out).To(Equal(jobSucceeded))
}

// The reasons of LastSnapshotCompactionSucceeded that upstream etcd-druid also writes keep its strings
// (api/core/v1alpha1: FullSnapshotSuccessReason, FullSnapshotFailureReason, JobFailureReasonDeadlineExceeded),
// so that either druid reads the condition the other wrote.
func TestCompactionConditionReasonsMatchUpstream(t *testing.T) {
	g := NewWithT(t)
	g.Expect(ReasonFullSnapshotTaken).To(Equal("FullSnapshotTakenSuccessfully"))
	g.Expect(ReasonFullSnapshotError).To(Equal("ErrorTriggeringFullSnapshot"))
	g.Expect(batchv1.JobReasonDeadlineExceeded).To(Equal("DeadlineExceeded"))
}

func TestFullSnapshotReason(t *testing.T) {
	g := NewWithT(t)
	etcd := &druidv1alpha1.Etcd{Spec: druidv1alpha1.EtcdSpec{Replicas: 0}}
	g.Expect(fullSnapshotReason(etcd, 5000, 1000)).To(BeEmpty(), "hibernated: no sidecar to ask, the Job runs")
	etcd.Spec.Replicas = 3
	g.Expect(fullSnapshotReason(etcd, 999, 1000)).To(BeEmpty())
	g.Expect(fullSnapshotReason(etcd, 1000, 1000)).To(Equal("1000 delta events since the last full snapshot reached triggerFullSnapshotThreshold 1000"))

	for reason, want := range map[string]string{
		"DeadlineExceeded":            "the last compaction Job exceeded its deadline with 10 delta events",
		"BackoffLimitExceeded":        "",
		"ErrorTriggeringFullSnapshot": "requesting the last full snapshot failed with 10 delta events",
	} {
		etcd.Status.Conditions = []druidv1alpha1.Condition{{Type: ConditionTypeLastSnapshotCompactionSucceeded, Status: druidv1alpha1.ConditionFalse, Reason: reason}}
		g.Expect(fullSnapshotReason(etcd, 10, 1000)).To(Equal(want), reason)
	}
	etcd.Status.Conditions[0] = druidv1alpha1.Condition{Type: ConditionTypeLastSnapshotCompactionSucceeded, Status: druidv1alpha1.ConditionTrue, Reason: "DeadlineExceeded"}
	g.Expect(fullSnapshotReason(etcd, 10, 1000)).To(BeEmpty())
}
