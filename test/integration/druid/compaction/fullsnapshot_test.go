package compaction

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/test/testpki"
)

const fullSnapshotTriggered = "etcddruid_compaction_full_snapshot_triggered_total"

// sidecars are the fake sidecars by namespace; sidecarEndpoint gives druid the one of an Etcd.
var sidecars sync.Map

func sidecarEndpoint(etcd *druidv1alpha1.Etcd) string {
	if s, ok := sidecars.Load(etcd.Namespace); ok {
		return s.(*fakeSidecar).server.URL
	}
	return "https://127.0.0.1:1" // nothing listens: the request fails
}

// fakeSidecar serves GET /snapshot/full over TLS to clients with a certificate of the test CA, as the
// sidecar does for callers outside the pod. A successful snapshot renews the full snapshot lease at the
// delta lease's revision, as the backup leader does.
type fakeSidecar struct {
	server *httptest.Server
	mu     sync.Mutex
	// requests counts the calls of /snapshot/full that presented a client certificate.
	requests int
	status   int
	onFull   func()
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

func (s *fakeSidecar) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

// startSidecar serves the fake sidecar of the namespace and stores the backup TLS secrets druid needs to
// call it: ca-etcd (bundle.crt) and etcd-client (tls.crt, tls.key).
func startSidecar(t *testing.T, namespace string) *fakeSidecar {
	t.Helper()
	g := NewWithT(t)
	ca := testpki.NewCA(t)
	server, client := ca.Issue(t, "etcd-server"), ca.Issue(t, "etcd-client")
	s := &fakeSidecar{status: http.StatusOK}
	s.server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/snapshot/full" || r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
			http.Error(w, "unexpected request", http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.requests++
		status, onFull := s.status, s.onFull
		s.mu.Unlock()
		if status == http.StatusOK && onFull != nil {
			onFull()
		}
		w.WriteHeader(status)
	}))
	pair, err := tls.LoadX509KeyPair(server.CertFile, server.KeyFile)
	g.Expect(err).NotTo(HaveOccurred())
	s.server.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, ClientCAs: ca.Pool(), ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12}
	s.server.StartTLS()
	t.Cleanup(s.server.Close)
	sidecars.Store(namespace, s)
	t.Cleanup(func() { sidecars.Delete(namespace) })

	read := func(path string) []byte {
		data, err := os.ReadFile(path)
		g.Expect(err).NotTo(HaveOccurred())
		return data
	}
	g.Expect(env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "ca-etcd"},
		Data: map[string][]byte{"bundle.crt": read(ca.CertFile)}})).To(Succeed())
	g.Expect(env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "etcd-client"},
		Data: map[string][]byte{"tls.crt": read(client.CertFile), "tls.key": read(client.KeyFile)}})).To(Succeed())
	return s
}

// withBackupTLS is Gardener's backup TLS: the sidecar's server certificate and druid's client certificate
// from ca-etcd.
func withBackupTLS(e *druidv1alpha1.Etcd) {
	e.Spec.Backup.TLS = &druidv1alpha1.TLSConfig{
		TLSCASecretRef:     druidv1alpha1.SecretReference{SecretReference: corev1.SecretReference{Name: "ca-etcd"}, DataKey: ptr.To("bundle.crt")},
		ServerTLSSecretRef: corev1.SecretReference{Name: "etcd-server"},
		ClientTLSSecretRef: corev1.SecretReference{Name: "etcd-client"},
	}
}

func withFullSnapshotThreshold(threshold int64) func(*druidv1alpha1.Etcd) {
	return func(e *druidv1alpha1.Etcd) {
		e.Spec.Backup.SnapshotCompaction.TriggerFullSnapshotThreshold = ptr.To(threshold)
	}
}

// At triggerFullSnapshotThreshold druid asks the sidecar for a full snapshot instead of starting a
// compaction Job (the deployed druid's meaning of the field); below it, the Job as before.
func TestAtFullSnapshotThresholdFullSnapshotInsteadOfJob(t *testing.T) {
	g := NewWithT(t)
	ns := env.CreateNamespace(t)
	sidecar := startSidecar(t, ns)
	etcd := createEtcd(t, ns, ptr.To(int64(100)), withBackupTLS, withFullSnapshotThreshold(1000))
	sidecar.renewOnSuccess(func() { setRevision(t, ns, etcd.FullSnapshotLeaseName(), 2000) })
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
	setRevision(t, ns, etcd.DeltaSnapshotLeaseName(), 2500)
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
		HaveField("Reason", "FullSnapshotError"),
		HaveField("Message", ContainSubstring("503")),
	))
	g.Eventually(eventReasons(ns, etcd.Name)).WithTimeout(timeout).WithPolling(poll).Should(ContainElement("FullSnapshotFailed"))
	g.Expect(sidecar.count()).To(Equal(1))

	sidecar.setStatus(http.StatusOK)
	sidecar.renewOnSuccess(func() { setRevision(t, ns, etcd.FullSnapshotLeaseName(), 1600) })
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
