package etcdcontroller_test

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/test/testpki"
)

// snapshotSidecars are the stand-in backup leaders by namespace; snapshotSidecarEndpoint gives druid the
// one of an Etcd (druid would call https://<name>-client.<namespace>.svc:8080).
var snapshotSidecars sync.Map

func snapshotSidecarEndpoint(etcd *druidv1alpha1.Etcd) string {
	if s, ok := snapshotSidecars.Load(etcd.Namespace); ok {
		return s.(*snapshotSidecar).server.URL
	}
	return "https://127.0.0.1:1" // nothing listens: the request fails
}

// snapshotSidecar serves GET /snapshot/full over TLS to clients with a certificate of the test CA, as the
// backup leader's sidecar does for callers outside the pod, and answers a successful snapshot with its
// JSON (kind, lastRevision, createdOn, snapName) at the revision set by succeedAt.
type snapshotSidecar struct {
	server   *httptest.Server
	mu       sync.Mutex
	requests int
	taken    int
	revision int64 // 0: the snapshot fails with 500
}

// succeedAt lets the following snapshots succeed at revision (0: fail again).
func (s *snapshotSidecar) succeedAt(revision int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.revision = revision
}

// count is the number of /snapshot/full calls that presented a client certificate.
func (s *snapshotSidecar) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

// takenCount is the number of snapshots taken (requests answered 200).
func (s *snapshotSidecar) takenCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.taken
}

// snapshotName is the object name the sidecar gives a full snapshot at revision taken at.
func snapshotName(revision int64, at time.Time) string {
	return fmt.Sprintf("Full-00000000-%08d-%d.gz", revision, at.Unix())
}

// startSnapshotSidecar serves the namespace's stand-in sidecar (failing until succeedAt) and stores the
// backup TLS secrets withBackupTLS names: ca-etcd (bundle.crt), etcd-server and etcd-client (tls.crt,
// tls.key).
func startSnapshotSidecar(t *testing.T, namespace string) *snapshotSidecar {
	t.Helper()
	g := NewWithT(t)
	ca := testpki.NewCA(t)
	server, client := ca.Issue(t, "etcd-server"), ca.Issue(t, "etcd-client")
	s := &snapshotSidecar{}
	s.server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/snapshot/full" || r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
			http.Error(w, "unexpected request", http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.requests++
		revision := s.revision
		if revision != 0 {
			s.taken++
		}
		s.mu.Unlock()
		if revision == 0 {
			http.Error(w, "taking the full snapshot: uploading: connection reset by peer", http.StatusInternalServerError)
			return
		}
		now := time.Now().UTC().Truncate(time.Second)
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"kind":"Full","startRevision":0,"lastRevision":%d,"createdOn":%q,"snapDir":"","snapName":%q,"prefix":"shoot--a/etcd-main","compressionSuffix":".gz","isFinal":false}`,
			revision, now.Format(time.RFC3339), snapshotName(revision, now))
	}))
	pair, err := tls.LoadX509KeyPair(server.CertFile, server.KeyFile)
	g.Expect(err).NotTo(HaveOccurred())
	s.server.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, ClientCAs: ca.Pool(), ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12}
	s.server.StartTLS()
	t.Cleanup(s.server.Close)
	snapshotSidecars.Store(namespace, s)
	t.Cleanup(func() { snapshotSidecars.Delete(namespace) })

	read := func(path string) []byte {
		data, err := os.ReadFile(path)
		g.Expect(err).NotTo(HaveOccurred())
		return data
	}
	for name, data := range map[string]map[string][]byte{
		"ca-etcd":     {"bundle.crt": read(ca.CertFile)},
		"etcd-server": {"tls.crt": read(server.CertFile), "tls.key": read(server.KeyFile)},
		"etcd-client": {"tls.crt": read(client.CertFile), "tls.key": read(client.KeyFile)},
	} {
		g.Expect(env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Data: data})).To(Succeed())
	}
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
