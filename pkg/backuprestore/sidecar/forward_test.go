package sidecar

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/gardener-etcd/gardener-etcd/test/support/testpki"
)

// The backup leader's sidecar serves a certificate of the Etcd's backup CA, not a publicly trusted one: a
// follower forwarding a snapshot request must verify it with --server-cacert. From outside its pod the
// leader serves snapshot requests only to clients of that CA, so the follower presents its own
// certificate (--server-cert, issued for client authentication too).
func TestForwardClientTrustsTheServerCAAndPresentsItsCertificate(t *testing.T) {
	g := NewWithT(t)
	ca := testpki.NewCA(t)
	leaderPair, followerPair := ca.Issue(t, "leader"), ca.Issue(t, "follower")
	cert, err := tls.LoadX509KeyPair(leaderPair.CertFile, leaderPair.KeyFile)
	g.Expect(err).NotTo(HaveOccurred())
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("ok " + r.TLS.PeerCertificates[0].Subject.CommonName))
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: ca.Pool()}
	srv.StartTLS()
	defer srv.Close()

	follower, err := (&Options{ServerCert: followerPair.CertFile, ServerKey: followerPair.KeyFile, ServerCACert: ca.CertFile}).forwardClient()
	g.Expect(err).NotTo(HaveOccurred())
	resp, err := follower.Get(srv.URL)
	g.Expect(err).NotTo(HaveOccurred())
	_ = resp.Body.Close()
	g.Expect(resp.StatusCode).To(Equal(http.StatusOK))

	withoutCert, err := (&Options{ServerCACert: ca.CertFile}).forwardClient()
	g.Expect(err).NotTo(HaveOccurred())
	_, err = withoutCert.Get(srv.URL)
	g.Expect(err).To(MatchError(ContainSubstring("certificate required")))

	systemRoots, err := (&Options{ServerCert: followerPair.CertFile, ServerKey: followerPair.KeyFile}).forwardClient()
	g.Expect(err).NotTo(HaveOccurred())
	_, err = systemRoots.Get(srv.URL)
	g.Expect(err).To(MatchError(ContainSubstring("certificate signed by unknown authority")))

	_, err = (&Options{ServerCACert: filepath.Join(t.TempDir(), "missing")}).forwardClient()
	g.Expect(err).To(MatchError(ContainSubstring("--server-cacert")))
	_, err = (&Options{ServerCert: filepath.Join(t.TempDir(), "missing"), ServerKey: "k"}).forwardClient()
	g.Expect(err).To(MatchError(ContainSubstring("--server-cert")))
}
