package etcd_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
)

// sidecar is an HTTPS server standing in for backup-restore: it presents etcd-server-main and accepts only
// clients with a certificate of ca-etcd, like the sidecar configured from the Etcd's backup TLS.
func sidecar(t *testing.T, namespace string, handler http.HandlerFunc) *httptest.Server {
	t.Helper()
	g := NewWithT(t)
	server := getSecret(g, namespace, "etcd-server-main")
	cert, err := tls.X509KeyPair(server.Data["tls.crt"], server.Data["tls.key"])
	g.Expect(err).NotTo(HaveOccurred())
	clientCAs := x509.NewCertPool()
	g.Expect(clientCAs.AppendCertsFromPEM(getSecret(g, namespace, "ca-etcd").Data["bundle.crt"])).To(BeTrue())
	s := httptest.NewUnstartedServer(handler)
	s.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, ClientCAs: clientCAs, ClientAuth: tls.RequireAndVerifyClientCert}
	s.StartTLS()
	t.Cleanup(s.Close)
	return s
}

// transportTo keeps the cluster DNS name in the URL (the server certificate is verified against it) and
// dials the test server instead.
func transportTo(namespace string, s *httptest.Server) etcd.SnapshotTransport {
	return etcd.SnapshotTransport{
		BaseURL: "https://etcd-main-client." + namespace + ":8080",
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, s.Listener.Addr().String())
		},
	}
}

// namespaceWithTLSSecrets is a new namespace with etcd-main's TLS secrets, which Snapshot authenticates with.
func namespaceWithTLSSecrets(t *testing.T) string {
	t.Helper()
	namespace := env.CreateNamespace(t)
	_, err := etcd.NewTLSSecrets(env.Client, namespace, etcd.TLSValues{Role: etcd.RoleMain}).Ensure(context.Background())
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	return namespace
}

// snapshotFrom runs botanist's Snapshot of etcd-main in namespace against server.
func snapshotFrom(namespace string, server *httptest.Server) (string, error) {
	v := values(etcd.RoleMain)
	v.SnapshotTransport = transportTo(namespace, server)
	return etcd.New(env.Client, namespace, v).Snapshot(context.Background())
}

func TestSnapshotAsksTheSidecarOverMutualTLS(t *testing.T) {
	g := NewWithT(t)
	namespace := namespaceWithTLSSecrets(t)
	requests := make(chan string, 10)
	answer, err := snapshotFrom(namespace, sidecar(t, namespace, func(w http.ResponseWriter, r *http.Request) {
		requests <- r.Method + " " + r.URL.RequestURI() + " by " + r.TLS.PeerCertificates[0].Subject.CommonName
		_, _ = w.Write([]byte(`{"kind":"Full","snapName":"Full-00000000-00000042-1"}`))
	}))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(answer).To(ContainSubstring("Full-00000000-00000042-1"))
	g.Expect(requests).To(HaveLen(1))
	g.Expect(<-requests).To(Equal("GET /snapshot/full?final=true by etcd-client"))
}

func TestSnapshotFailsOnUntrustedServersAndErrorAnswers(t *testing.T) {
	g := NewWithT(t)
	namespace := namespaceWithTLSSecrets(t)

	// A server with a certificate ca-etcd did not sign is not the sidecar.
	impostor := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("{}")) }))
	t.Cleanup(impostor.Close)
	_, err := snapshotFrom(namespace, impostor)
	g.Expect(err).To(MatchError(ContainSubstring("certificate")))

	// A sidecar that stays unavailable is asked a bounded number of times, its last answer the error; any
	// other error answer fails at once.
	for _, tc := range []struct {
		status    int
		text      string
		wantErr   string
		wantAsked int32
	}{
		{status: http.StatusServiceUnavailable, text: "etcd is not reachable", wantErr: "503 Service Unavailable: etcd is not reachable", wantAsked: 5},
		{status: http.StatusInternalServerError, text: "snapshot failed", wantErr: "500 Internal Server Error: snapshot failed", wantAsked: 1},
	} {
		var asked atomic.Int32
		_, err = snapshotFrom(namespace, sidecar(t, namespace, func(w http.ResponseWriter, _ *http.Request) {
			asked.Add(1)
			http.Error(w, tc.text, tc.status)
		}))
		g.Expect(err).To(MatchError(ContainSubstring(tc.wantErr)))
		g.Expect(asked.Load()).To(Equal(tc.wantAsked), "requests answered %d", tc.status)
	}

	// Without the client certificate there is nothing to authenticate with.
	g.Expect(env.Client.Delete(context.Background(), getSecret(g, namespace, "etcd-client"))).To(Succeed())
	_, err = snapshotFrom(namespace, impostor)
	g.Expect(err).To(MatchError(ContainSubstring("etcd-client is missing")))
}

// Right after a member joined, its sidecar does not know the backup leader for a few seconds and answers
// 503; the client service may send the request there. Snapshot asks again and gets the snapshot.
func TestSnapshotAsksAgainWhileTheSidecarIsNotReadyYet(t *testing.T) {
	g := NewWithT(t)
	namespace := namespaceWithTLSSecrets(t)
	var asked atomic.Int32
	answer, err := snapshotFrom(namespace, sidecar(t, namespace, func(w http.ResponseWriter, _ *http.Request) {
		if asked.Add(1) <= 2 {
			http.Error(w, "finding the backup leader: no backup leader known yet", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte(`{"kind":"Full","snapName":"Full-00000000-00000042-1"}`))
	}))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(answer).To(ContainSubstring("Full-00000000-00000042-1"))
	g.Expect(asked.Load()).To(BeEquivalentTo(3))
}

// A hibernated etcd has no member to snapshot: Snapshot says so at once instead of asking a service without
// endpoints (which, depending on the network, refuses or never answers). The caller wakes it first.
func TestSnapshotRefusesAHibernatedEtcdWithoutAsking(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	namespace := env.CreateNamespace(t)
	g.Expect(etcd.New(env.Client, namespace, values(etcd.RoleMain)).Deploy(ctx)).To(Succeed())
	obj := &druidv1alpha1.Etcd{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "etcd-main"}, obj)).To(Succeed())
	patch := client.MergeFrom(obj.DeepCopy())
	obj.Spec.Replicas = 0
	g.Expect(env.Client.Patch(ctx, obj, patch)).To(Succeed())

	requests := make(chan string, 10)
	_, err := snapshotFrom(namespace, sidecar(t, namespace, func(w http.ResponseWriter, r *http.Request) {
		requests <- r.URL.RequestURI()
		_, _ = w.Write([]byte(`{"kind":"Full","snapName":"Full-00000000-00000042-1"}`))
	}))
	g.Expect(err).To(MatchError(ContainSubstring("hibernated (spec.replicas 0)")))
	g.Expect(requests).To(BeEmpty())
}
