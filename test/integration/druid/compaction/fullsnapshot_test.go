package compaction

import (
	"net/http"
	"sync"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/test/support/sidecarstandin"
)

const fullSnapshotTriggered = "etcddruid_compaction_full_snapshot_triggered_total"

// sidecars are the stand-in sidecars by namespace, which druid calls instead of the client Service.
var sidecars sidecarstandin.Endpoints

// withBackupTLS is Gardener's backup TLS, with the secrets startSidecar stores.
var withBackupTLS = sidecarstandin.WithBackupTLS

// fakeSidecar answers with a settable status; a successful snapshot renews the full snapshot lease at the
// delta lease's revision when the test says so (renewOnSuccess), as the backup leader does.
type fakeSidecar struct {
	*sidecarstandin.Sidecar
	mu     sync.Mutex
	status int
	onFull func()
}

func (s *fakeSidecar) setStatus(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status = status
}

// renewOnSuccess sets what a successful snapshot does besides answering 200.
func (s *fakeSidecar) renewOnSuccess(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onFull = f
}

// count is the number of /snapshot/full calls that presented a client certificate.
func (s *fakeSidecar) count() int { return s.Requests() }

// startSidecar serves the fake sidecar of the namespace and stores the backup TLS secrets druid needs to
// call it.
func startSidecar(t *testing.T, namespace string) *fakeSidecar {
	t.Helper()
	s := &fakeSidecar{status: http.StatusOK}
	s.Sidecar = sidecarstandin.Start(t, env.Client, &sidecars, namespace, s.answer)
	return s
}

func (s *fakeSidecar) answer(w http.ResponseWriter) {
	s.mu.Lock()
	status, onFull := s.status, s.onFull
	s.mu.Unlock()
	if status == http.StatusOK && onFull != nil {
		onFull()
	}
	w.WriteHeader(status)
}

func withFullSnapshotThreshold(threshold int64) func(*druidv1alpha1.Etcd) {
	return func(e *druidv1alpha1.Etcd) {
		e.Spec.Backup.SnapshotCompaction.TriggerFullSnapshotThreshold = ptr.To(threshold)
	}
}

// At triggerFullSnapshotThreshold druid asks the sidecar for a full snapshot instead of starting a
// compaction Job (upstream druid's meaning of the field); below it, the Job as before.
func TestAtFullSnapshotThresholdFullSnapshotInsteadOfJob(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	sidecar := startSidecar(t, ns)
	etcd := createEtcd(t, ns, ptr.To(int64(100)), withBackupTLS, withFullSnapshotThreshold(1000))
	sidecar.renewOnSuccess(func() { setRevision(t, ns, druidv1alpha1.FullSnapshotLeaseName(etcd), 2000) })
	setRevisions(t, etcd, 1000, 2000) // 1,000 delta events: both thresholds reached

	g.Eventually(sidecar.count).WithTimeout(timeout).WithPolling(poll).Should(Equal(1))
	g.Eventually(compactionCondition(etcd)).WithTimeout(timeout).WithPolling(poll).Should(And(
		HaveField("Status", druidv1alpha1.ConditionTrue),
		HaveField("Reason", "FullSnapshotTakenSuccessfully"),
		HaveField("Message", ContainSubstring("1000 delta events since the last full snapshot reached triggerFullSnapshotThreshold 1000")),
	))
	g.Eventually(metric(deltaEvents, etcd)).WithTimeout(timeout).WithPolling(poll).Should(Equal(0.0))
	g.Consistently(jobs(ns)).WithTimeout(settle).WithPolling(poll).Should(BeEmpty(), "a full snapshot instead of a compaction Job")
	g.Expect(sidecar.count()).To(Equal(1), "the full snapshot left nothing to compact")
	g.Expect(metric(fullSnapshotTriggered, etcd)(g)).To(Equal(1.0))
	g.Expect(metric(jobsTotal, etcd)(g)).To(Equal(-1.0), "no Job, no series")
	g.Eventually(eventReasons(ns, etcd.Name)).WithTimeout(timeout).WithPolling(poll).Should(ContainElement("FullSnapshotTakenSuccessfully"))

	// Between the two thresholds: a compaction Job, no full snapshot.
	setRevision(t, ns, druidv1alpha1.DeltaSnapshotLeaseName(etcd), 2500)
	waitForJob(t, etcd)
	g.Expect(sidecar.count()).To(Equal(1))
}

// A failed request is recorded like a failed Job (condition False, Warning event) and retried after the
// back-off, again as a full snapshot and not as a Job.
func TestFailedFullSnapshotRequestIsRecordedAndRetried(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	sidecar := startSidecar(t, ns)
	sidecar.setStatus(http.StatusServiceUnavailable)
	etcd := createEtcd(t, ns, ptr.To(int64(100)), withBackupTLS, withFullSnapshotThreshold(500))
	setRevisions(t, etcd, 1000, 1600)

	g.Eventually(compactionCondition(etcd)).WithTimeout(timeout).WithPolling(poll).Should(And(
		HaveField("Status", druidv1alpha1.ConditionFalse),
		HaveField("Reason", "ErrorTriggeringFullSnapshot"),
		HaveField("Message", ContainSubstring("503")),
	))
	g.Eventually(eventReasons(ns, etcd.Name)).WithTimeout(timeout).WithPolling(poll).Should(ContainElement("FullSnapshotFailed"))
	g.Expect(sidecar.count()).To(Equal(1))

	sidecar.setStatus(http.StatusOK)
	sidecar.renewOnSuccess(func() { setRevision(t, ns, druidv1alpha1.FullSnapshotLeaseName(etcd), 1600) })
	g.Eventually(compactionCondition(etcd)).WithTimeout(timeout + retryBackoff).WithPolling(poll).Should(
		HaveField("Reason", "FullSnapshotTakenSuccessfully"))
	g.Expect(sidecar.count()).To(Equal(2))
	g.Consistently(jobs(ns)).WithTimeout(settle).WithPolling(poll).Should(BeEmpty())
}

// Without a client certificate druid cannot call the sidecar (it serves /snapshot/full only to the pod and
// to holders of a backup CA certificate), so a compaction Job runs as below the threshold.
func TestWithoutClientCertificateCompactionJobBeyondFullSnapshotThreshold(t *testing.T) {
	ns := env.CreateNamespace(t)
	etcd := createEtcd(t, ns, ptr.To(int64(100)), withFullSnapshotThreshold(500))
	setRevisions(t, etcd, 1000, 1600)
	waitForJob(t, etcd)
}
