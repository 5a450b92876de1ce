package etcdswitchover_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd/gardenersecrets"
	"github.com/gardener-etcd/gardener-etcd/test/support/gardenletsecrets"
)

// Snapshot talks to the sidecar with the secrets the Etcd's spec.backup.tls names, so after the switch-over
// it presents the secrets manager's client certificate and trusts its CA bundle, whatever the names.
func TestSnapshotUsesTheSecretsTheEtcdReferences(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	namespace := env.CreateNamespace(t)
	refs := gardenletReconcile(t, namespace, etcd.RoleMain, false, gardenletsecrets.CARotation{})
	gardenletEtcd(t, namespace, etcd.RoleMain, refs)
	sm := gardenletSecretsManager(t, namespace, gardenletsecrets.CARotation{})
	values := etcd.Values{Role: etcd.RoleMain, TLS: gardenersecrets.New(sm)}
	g.Expect(etcd.New(env.Client, namespace, values).Deploy(ctx)).To(Succeed())

	// The sidecar as druid configures it from spec.backup.tls.
	backupTLS := getEtcd(g, namespace, etcd.RoleMain).Spec.Backup.TLS
	server := getSecret(g, namespace, backupTLS.ServerTLSSecretRef.Name)
	cert, err := tls.X509KeyPair(server.Data["tls.crt"], server.Data["tls.key"])
	g.Expect(err).NotTo(HaveOccurred())
	clientCAs := x509.NewCertPool()
	g.Expect(clientCAs.AppendCertsFromPEM(getSecret(g, namespace, backupTLS.TLSCASecretRef.Name).Data[*backupTLS.TLSCASecretRef.DataKey])).To(BeTrue())
	requests := make(chan string, 1)
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests <- r.TLS.PeerCertificates[0].Subject.CommonName
		_, _ = w.Write([]byte(`{"kind":"Full"}`))
	}))
	s.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, ClientCAs: clientCAs, ClientAuth: tls.RequireAndVerifyClientCert}
	s.StartTLS()
	t.Cleanup(s.Close)

	values.SnapshotTransport = etcd.SnapshotTransport{
		BaseURL: "https://etcd-main-client." + namespace + ":8080",
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, s.Listener.Addr().String())
		},
	}
	answer, err := etcd.New(env.Client, namespace, values).Snapshot(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(answer).To(ContainSubstring("Full"))
	g.Expect(<-requests).To(Equal("etcd-client"))
}
