package httpapi

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	. "github.com/onsi/gomega"

	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
	"github.com/gardener-etcd/gardener-etcd/test/support/podnettest"
	"github.com/gardener-etcd/gardener-etcd/test/support/testpki"
)

// servedOn runs the API on addr (TLS when pair is set, verifying client certificates of clientCA) until
// the test ends and returns its base URL.
func servedOn(t *testing.T, addr string, s *Server, pair *testpki.Pair) string {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	scheme, cert, key := "http", "", ""
	if pair != nil {
		scheme, cert, key = "https", pair.CertFile, pair.KeyFile
	}
	go func() { done <- s.Serve(ctx, l, cert, key) }()
	t.Cleanup(func() { cancel(); <-done })
	return scheme + "://" + l.Addr().String()
}

func call(c *http.Client, url string) (int, error) {
	resp, err := c.Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

// The state-changing endpoints answer a caller in another pod (another network namespace, not loopback)
// with 401/403 and do nothing; reads stay open, callers inside the pod (loopback) are served, and with TLS
// a client certificate of the backup-restore CA admits the snapshot endpoints, one of another CA does not.
func TestStateChangingEndpointsRefuseCallersOutsideThePod(t *testing.T) {
	caller := podnettest.NewCaller(t)
	g := NewWithT(t)
	ca := testpki.NewCA(t)
	serverPair := ca.Issue(t, "sidecar", "sidecar.test")
	clientPair := ca.Issue(t, "gardener")
	other := testpki.NewCA(t)
	otherPair := other.Issue(t, "intruder")

	for _, withTLS := range []bool{false, true} {
		t.Run(map[bool]string{false: "http", true: "https"}[withTLS], func(t *testing.T) {
			init := newGatedInitializer()
			snaps := &recordingSnapshotter{}
			opts := Options{Initializer: init, Snapshotter: snaps, Log: testr.New(t),
				Config: func(context.Context) ([]byte, error) { return []byte("name: m0\n"), nil }}
			var pair *testpki.Pair
			if withTLS {
				opts.ClientCAFile, pair = ca.CertFile, &serverPair
			}
			// The server listens on the host's bridge address, where the other pod reaches it.
			base := servedOn(t, net.JoinHostPort(caller.Host.String(), "0"), New(t.Context(), opts), pair)

			tlsFor := func(p *testpki.Pair) *tls.Config {
				cfg := &tls.Config{RootCAs: ca.Pool(), ServerName: "sidecar.test", MinVersion: tls.VersionTLS12}
				if p != nil {
					cert, err := tls.LoadX509KeyPair(p.CertFile, p.KeyFile)
					g.Expect(err).NotTo(HaveOccurred())
					cfg.Certificates = []tls.Certificate{cert}
				}
				return cfg
			}
			outsider := caller.HTTPClient(tlsFor(nil))
			for path, want := range map[string]int{
				"/initialization/start?mode=full": http.StatusForbidden,
				"/initialization/status":          http.StatusForbidden,
				"/snapshot/full?final=true":       http.StatusUnauthorized,
				"/snapshot/delta":                 http.StatusUnauthorized,
				"/snapshot/latest":                http.StatusUnauthorized,
				"/config":                         http.StatusOK,
				"/healthz":                        http.StatusOK,
			} {
				code, err := call(outsider, base+path)
				g.Expect(err).NotTo(HaveOccurred(), path)
				g.Expect(code).To(Equal(want), "%s from %s", path, caller.IP)
			}
			g.Expect(init.modes).To(BeEmpty(), "no initialization started")
			g.Expect(snaps.calls).To(BeEmpty(), "no snapshot taken")

			if withTLS {
				withCert := caller.HTTPClient(tlsFor(&clientPair))
				code, err := call(withCert, base+"/snapshot/full")
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(code).To(Equal(http.StatusOK), "a client of the backup-restore CA takes snapshots")
				g.Expect(snaps.calls).To(Equal([]string{"full"}))
				code, err = call(withCert, base+"/initialization/start")
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(code).To(Equal(http.StatusForbidden), "a client certificate does not admit initializations")
				_, err = call(caller.HTTPClient(tlsFor(&otherPair)), base+"/snapshot/delta")
				g.Expect(err).To(MatchError(ContainSubstring("certificate")), "a certificate of another CA fails the handshake")
				g.Expect(snaps.calls).To(Equal([]string{"full"}))
				g.Expect(init.modes).To(BeEmpty())
				return
			}
			// Inside the pod: the same server on loopback serves the wrapper and local callers.
			local := servedOn(t, "127.0.0.1:0", New(t.Context(), opts), nil)
			code, err := call(http.DefaultClient, local+"/snapshot/delta")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(code).To(Equal(http.StatusOK))
			code, err = call(http.DefaultClient, local+"/initialization/start")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(code).To(Equal(http.StatusOK))
			g.Eventually(init.modes, 10*time.Second).Should(Receive(Equal(podwire.InitFull)))
			init.results <- nil
		})
	}
}
