package sidecar

import (
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/gardener-etcd/gardener-etcd/pkg/webhookcert"
)

// The backup leader's sidecar serves a certificate of the Etcd's backup CA, not a publicly trusted one: a
// follower forwarding a snapshot request must verify it with --server-cacert.
func TestForwardClientTrustsTheServerCA(t *testing.T) {
	g := NewWithT(t)
	bundle, err := webhookcert.Generate([]string{"etcd-main-0.etcd-main-peer.ns.svc"}, []net.IP{net.ParseIP("127.0.0.1")}, time.Now(), time.Hour)
	g.Expect(err).NotTo(HaveOccurred())
	cert, err := tls.X509KeyPair(bundle.Cert, bundle.Key)
	g.Expect(err).NotTo(HaveOccurred())
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	defer srv.Close()
	caFile := filepath.Join(t.TempDir(), "ca.crt")
	g.Expect(os.WriteFile(caFile, bundle.CACert, 0o600)).To(Succeed())

	trusting, err := (&Options{ServerCert: "/c", ServerCACert: caFile}).forwardClient()
	g.Expect(err).NotTo(HaveOccurred())
	resp, err := trusting.Get(srv.URL)
	g.Expect(err).NotTo(HaveOccurred())
	_ = resp.Body.Close()
	g.Expect(resp.StatusCode).To(Equal(http.StatusOK))

	systemRoots, err := (&Options{ServerCert: "/c"}).forwardClient()
	g.Expect(err).NotTo(HaveOccurred())
	_, err = systemRoots.Get(srv.URL)
	g.Expect(err).To(MatchError(ContainSubstring("certificate signed by unknown authority")))

	_, err = (&Options{ServerCACert: filepath.Join(t.TempDir(), "missing")}).forwardClient()
	g.Expect(err).To(MatchError(ContainSubstring("--server-cacert")))
}
