// Package sidecarstandin stands in for the backup leader's sidecar in druid's envtest suites, where no
// etcd pod runs: it serves GET /snapshot/full (also with ?final=true) and GET /snapshot/delta over TLS to
// clients presenting a certificate of its CA, as the sidecar does for callers outside the pod, and stores
// the backup TLS secrets druid needs to call it. What a request answers is up to the test (Answer, or
// Handler to see the request); the stand-ins are found by namespace (Endpoints), the hook druid's
// fullsnapshot.HTTP calls instead of the client Service.
package sidecarstandin

import (
	"context"
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/test/support/testpki"
)

// Names of the backup TLS secrets Start stores and WithBackupTLS refers to.
const (
	CASecret     = "ca-etcd"     // bundle.crt
	ServerSecret = "etcd-server" // tls.crt, tls.key
	ClientSecret = "etcd-client" // tls.crt, tls.key
)

// Answer writes the response to one authenticated GET /snapshot/full or /snapshot/delta.
type Answer func(w http.ResponseWriter)

// Handler is Answer for tests that answer by the request (its path and query).
type Handler func(w http.ResponseWriter, r *http.Request)

// Sidecar is one stand-in.
type Sidecar struct {
	server   *httptest.Server
	handler  Handler
	mu       sync.Mutex
	requests []string
}

// Requests is the number of snapshot calls that presented a client certificate.
func (s *Sidecar) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

// RequestURIs are the path and query of every snapshot call that presented a client certificate, in
// order (e.g. "/snapshot/full?final=true").
func (s *Sidecar) RequestURIs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// Endpoints are the running stand-ins by namespace.
type Endpoints struct{ byNamespace sync.Map }

// Of is the stand-in's URL for an Etcd, or one where nothing listens (the request fails); it is the
// Endpoint hook of druid's fullsnapshot.HTTP.
func (e *Endpoints) Of(etcd *druidv1alpha1.Etcd) string {
	if s, ok := e.byNamespace.Load(etcd.Namespace); ok {
		return s.(*Sidecar).server.URL
	}
	return "https://127.0.0.1:1"
}

// Start serves a stand-in for namespace until the test ends, registers it in endpoints and stores the
// secrets CASecret, ServerSecret and ClientSecret in namespace through c.
func Start(t *testing.T, c client.Client, endpoints *Endpoints, namespace string, answer Answer) *Sidecar {
	t.Helper()
	return StartHandler(t, c, endpoints, namespace, func(w http.ResponseWriter, _ *http.Request) { answer(w) })
}

// StartHandler is Start with an answer that sees the request.
func StartHandler(t *testing.T, c client.Client, endpoints *Endpoints, namespace string, handler Handler) *Sidecar {
	t.Helper()
	ca := testpki.NewCA(t)
	serverCert, clientCert := ca.Issue(t, ServerSecret), ca.Issue(t, ClientSecret)
	s := &Sidecar{handler: handler}
	s.server = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	pair, err := tls.LoadX509KeyPair(serverCert.CertFile, serverCert.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	s.server.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, ClientCAs: ca.Pool(), ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12}
	s.server.StartTLS()
	t.Cleanup(s.server.Close)
	endpoints.byNamespace.Store(namespace, s)
	t.Cleanup(func() { endpoints.byNamespace.Delete(namespace) })

	read := func(path string) []byte {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	for name, data := range map[string]map[string][]byte{
		CASecret:     {"bundle.crt": read(ca.CertFile)},
		ServerSecret: {"tls.crt": read(serverCert.CertFile), "tls.key": read(serverCert.KeyFile)},
		ClientSecret: {"tls.crt": read(clientCert.CertFile), "tls.key": read(clientCert.KeyFile)},
	} {
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Data: data}
		if err := c.Create(context.Background(), secret); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func (s *Sidecar) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet || (r.URL.Path != "/snapshot/full" && r.URL.Path != "/snapshot/delta") || r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		http.Error(w, "unexpected request", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, r.URL.RequestURI())
	s.mu.Unlock()
	s.handler(w, r)
}

// WithBackupTLS is Gardener's backup TLS on an Etcd: the sidecar's server certificate and druid's client
// certificate, from the secrets Start stores.
func WithBackupTLS(e *druidv1alpha1.Etcd) {
	e.Spec.Backup.TLS = &druidv1alpha1.TLSConfig{
		TLSCASecretRef:     druidv1alpha1.SecretReference{SecretReference: corev1.SecretReference{Name: CASecret}, DataKey: ptr.To("bundle.crt")},
		ServerTLSSecretRef: corev1.SecretReference{Name: ServerSecret},
		ClientTLSSecretRef: corev1.SecretReference{Name: ClientSecret},
	}
}
