package compaction

import (
	"context"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/component/snapshotlease"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/compaction"
	"github.com/gardener-etcd/gardener-etcd/test/support/envtest"
)

const (
	timeout = 20 * time.Second
	poll    = 100 * time.Millisecond
	settle  = 2 * time.Second
)

var ctx = context.Background()

// createEtcd stores an Etcd with an S3 store (endpoint override, compression), compaction threshold and
// resources, changed by customize, and creates its snapshot leases as druid's snapshot lease component does.
func createEtcd(t *testing.T, namespace string, threshold *int64, customize ...func(*druidv1alpha1.Etcd)) *druidv1alpha1.Etcd {
	t.Helper()
	g := NewWithT(t)
	etcd := &druidv1alpha1.Etcd{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "etcd-main"},
		Spec: druidv1alpha1.EtcdSpec{
			Labels:   map[string]string{"role": "main"},
			Replicas: 1,
			Backup: druidv1alpha1.BackupSpec{
				Store: &druidv1alpha1.StoreSpec{
					Container: ptr.To("bucket"), Prefix: "shoot--dev--x/etcd-main", Provider: ptr.To(druidv1alpha1.StorageProviderAWS),
					SecretRef: &corev1.SecretReference{Name: "etcd-backup"}, EndpointOverride: ptr.To("http://127.0.0.1:9000"),
				},
				SnapshotCompaction: &druidv1alpha1.SnapshotCompactionSpec{
					EventsThreshold: threshold,
					Resources: &corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("600m"), corev1.ResourceMemory: resource.MustParse("1Gi")},
					},
				},
				SnapshotCompression: &druidv1alpha1.CompressionSpec{Enabled: ptr.To(true), Policy: ptr.To(druidv1alpha1.GzipCompression)},
				EtcdSnapshotTimeout: &metav1.Duration{Duration: 20 * time.Minute},
			},
		},
	}
	for _, c := range customize {
		c(etcd)
	}
	g.Expect(env.Client.Create(ctx, etcd)).To(Succeed())
	defaulted := etcd.DeepCopy()
	druidv1alpha1.SetDefaults(defaulted)
	g.Expect(snapshotlease.New(component.Uncached(env.Client)).Sync(ctx, defaulted)).To(Succeed())
	return etcd
}

// setRevision writes a snapshot lease's holderIdentity as the sidecar (or the compactor) does.
func setRevision(t *testing.T, namespace, lease string, revision int64) {
	t.Helper()
	NewWithT(t).Eventually(func() error {
		l := &coordinationv1.Lease{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: lease}, l); err != nil {
			return err
		}
		l.Spec.HolderIdentity = ptr.To(strconv.FormatInt(revision, 10))
		l.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
		return env.Client.Update(ctx, l)
	}).WithTimeout(timeout).Should(Succeed())
}

func setRevisions(t *testing.T, etcd *druidv1alpha1.Etcd, full, delta int64) {
	t.Helper()
	setRevision(t, etcd.Namespace, druidv1alpha1.FullSnapshotLeaseName(etcd), full)
	setRevision(t, etcd.Namespace, druidv1alpha1.DeltaSnapshotLeaseName(etcd), delta)
}

// jobs lists the compaction Jobs of the namespace.
func jobs(namespace string) func(g Gomega) []batchv1.Job {
	return func(g Gomega) []batchv1.Job {
		list := &batchv1.JobList{}
		g.Expect(env.Client.List(ctx, list, client.InNamespace(namespace))).To(Succeed())
		return list.Items
	}
}

func waitForJob(t *testing.T, etcd *druidv1alpha1.Etcd) *batchv1.Job {
	t.Helper()
	job := &batchv1.Job{}
	NewWithT(t).Eventually(func() error {
		return env.Client.Get(ctx, client.ObjectKey{Namespace: etcd.Namespace, Name: druidv1alpha1.CompactionJobName(etcd)}, job)
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	return job
}

// expectJobGone waits until job (by its UID) no longer exists.
func expectJobGone(t *testing.T, job *batchv1.Job) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		current := &batchv1.Job{}
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(job), current)
		if apierrors.IsNotFound(err) {
			return
		}
		g.Expect(err).NotTo(HaveOccurred())
		// A Job of the same name with another UID is the retry: the controller may create it (after its
		// back-off) before a test slowed down by a busy machine polls again, and then the name never
		// looks free; the Job waited for is gone all the same.
		g.Expect(current.UID).NotTo(Equal(job.UID), "job %s still exists", job.Name)
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}

// finishJob ends the Job as the Job controller would.
func finishJob(t *testing.T, job *batchv1.Job, succeeded bool, reason, message string) {
	t.Helper()
	out := envtest.JobOutcome{Succeeded: succeeded, Failed: 2, Reason: reason, Message: message}
	NewWithT(t).Eventually(func() error { return env.FinishJob(ctx, job, out) }).WithTimeout(timeout).Should(Succeed())
}

// failedPod stores a failed pod of job, as the Job controller would have created it (envtest runs none),
// with the given condition in its status.
func failedPod(t *testing.T, job *batchv1.Job, cond corev1.PodCondition) {
	t.Helper()
	g := NewWithT(t)
	labels := map[string]string{batchv1.ControllerUidLabel: string(job.UID), batchv1.JobNameLabel: job.Name}
	for k, v := range job.Spec.Template.Labels {
		labels[k] = v
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: job.Namespace, GenerateName: job.Name + "-", Labels: labels},
		Spec:       *job.Spec.Template.Spec.DeepCopy(),
	}
	g.Expect(env.Client.Create(ctx, pod)).To(Succeed())
	cond.LastTransitionTime = metav1.Now()
	pod.Status = corev1.PodStatus{Phase: corev1.PodFailed, Conditions: []corev1.PodCondition{cond}}
	g.Expect(env.Client.Status().Update(ctx, pod)).To(Succeed())
}

// compactionCondition reads LastSnapshotCompactionSucceeded of the stored Etcd.
func compactionCondition(etcd *druidv1alpha1.Etcd) func(g Gomega) *druidv1alpha1.Condition {
	return func(g Gomega) *druidv1alpha1.Condition {
		stored := &druidv1alpha1.Etcd{}
		g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(etcd), stored)).To(Succeed())
		return druidv1alpha1.FindCondition(stored.Status.Conditions, compaction.ConditionTypeLastSnapshotCompactionSucceeded)
	}
}

// eventReasons lists the reasons of events.k8s.io events regarding the named object.
func eventReasons(namespace, name string) func(g Gomega) []string {
	return func(g Gomega) []string {
		list := &eventsv1.EventList{}
		g.Expect(env.Client.List(ctx, list, client.InNamespace(namespace))).To(Succeed())
		var reasons []string
		for _, e := range list.Items {
			if e.Regarding.Name == name {
				reasons = append(reasons, e.Reason)
			}
		}
		return reasons
	}
}

// metricValue reads one series of the Etcd from controller-runtime's registry, with the further label
// pairs in extra (name, value, …); ok is false when the series does not exist. A histogram reads as its
// sample count.
func metricValue(g Gomega, name string, etcd *druidv1alpha1.Etcd, extra ...string) (float64, bool) {
	families, err := metrics.Registry.Gather()
	g.Expect(err).NotTo(HaveOccurred())
	for _, family := range families {
		if family.GetName() != name {
			continue
		}
	metrics:
		for _, m := range family.GetMetric() {
			if label(m, "etcd_namespace") != etcd.Namespace || label(m, "etcd_name") != etcd.Name {
				continue
			}
			for i := 0; i+1 < len(extra); i += 2 {
				if label(m, extra[i]) != extra[i+1] {
					continue metrics
				}
			}
			switch {
			case m.GetGauge() != nil:
				return m.GetGauge().GetValue(), true
			case m.GetHistogram() != nil:
				return float64(m.GetHistogram().GetSampleCount()), true
			}
			return m.GetCounter().GetValue(), true
		}
	}
	return 0, false
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// metric polls metricValue for Eventually; a missing series reads as -1.
func metric(name string, etcd *druidv1alpha1.Etcd, extra ...string) func(g Gomega) float64 {
	return func(g Gomega) float64 {
		v, ok := metricValue(g, name, etcd, extra...)
		if !ok {
			return -1
		}
		return v
	}
}
