package httpapi

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strconv"
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
// with 401/403 and do nothing; reads stay open, and so do the snapshot triggers (they only add backups:
// gardenlet's final snapshot comes without a client certificate); callers inside the pod (loopback) are
// served, and with TLS a client certificate of the backup-restore CA admits /snapshot/latest, one of
// another CA does not.
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

			outsider := caller.HTTPClient(tlsFor(t, ca, nil))
			for path, want := range map[string]int{
				"/initialization/start?mode=full": http.StatusForbidden,
				"/initialization/status":          http.StatusForbidden,
				"/snapshot/latest":                http.StatusUnauthorized,
				"/config":                         http.StatusOK,
				"/healthz":                        http.StatusOK,
			} {
				code, err := call(outsider, base+path)
				g.Expect(err).NotTo(HaveOccurred(), path)
				g.Expect(code).To(Equal(want), "%s from %s", path, caller.IP)
			}
			g.Expect(init.modes).To(BeEmpty(), "no initialization started")
			g.Expect(snaps.calls).To(BeEmpty(), "no store listed")
			for _, path := range []string{"/snapshot/full?final=true", "/snapshot/delta"} {
				code, err := call(outsider, base+path)
				g.Expect(err).NotTo(HaveOccurred(), path)
				g.Expect(code).To(Equal(http.StatusOK), "a snapshot trigger from %s without a client certificate: %s", caller.IP, path)
			}
			g.Expect(snaps.calls).To(Equal([]string{"full", "delta"}))

			if withTLS {
				withCert := caller.HTTPClient(tlsFor(t, ca, &clientPair))
				code, err := call(withCert, base+"/snapshot/latest")
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(code).To(Equal(http.StatusOK), "a client of the backup-restore CA lists snapshots")
				code, err = call(withCert, base+"/initialization/start")
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(code).To(Equal(http.StatusForbidden), "a client certificate does not admit initializations")
				_, err = call(caller.HTTPClient(tlsFor(t, ca, &otherPair)), base+"/snapshot/delta")
				g.Expect(err).To(MatchError(ContainSubstring("certificate")), "a certificate of another CA fails the handshake")
				g.Expect(snaps.calls).To(Equal([]string{"full", "delta", "latest"}))
				g.Expect(init.modes).To(BeEmpty())
				return
			}
			// Inside the pod: the same server on loopback serves the wrapper and local callers.
			local := servedOn(t, "127.0.0.1:0", New(t.Context(), opts), nil)
			code, err := call(http.DefaultClient, local+"/snapshot/latest")
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

// tlsFor trusts ca for the server name sidecar.test and presents p as the client certificate (none if nil).
func tlsFor(t *testing.T, ca *testpki.CA, p *testpki.Pair) *tls.Config {
	t.Helper()
	cfg := &tls.Config{RootCAs: ca.Pool(), ServerName: "sidecar.test", MinVersion: tls.VersionTLS12}
	if p != nil {
		cert, err := tls.LoadX509KeyPair(p.CertFile, p.KeyFile)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg
}

// Callers without credentials get a few snapshot triggers per kind, then 429 with Retry-After, and no
// snapshot is taken; the other kind has its own budget. Callers with a client certificate of the
// backup-restore CA and callers inside the pod are not limited.
func TestSnapshotTriggersWithoutCredentialsAreRateLimited(t *testing.T) {
	caller := podnettest.NewCaller(t)
	g := NewWithT(t)
	ca := testpki.NewCA(t)
	serverPair := ca.Issue(t, "sidecar", "sidecar.test")
	clientPair := ca.Issue(t, "druid")
	snaps := &recordingSnapshotter{}
	// A period no test run reaches: the budget is not refilled while the test runs.
	opts := Options{Initializer: newGatedInitializer(), Snapshotter: snaps, Log: testr.New(t), ClientCAFile: ca.CertFile,
		Config: func(context.Context) ([]byte, error) { return nil, nil }, TriggerLimit: TriggerLimit{Burst: 2, Every: 24 * time.Hour}}
	s := New(t.Context(), opts)
	base := servedOn(t, net.JoinHostPort(caller.Host.String(), "0"), s, &serverPair)

	outsider := caller.HTTPClient(tlsFor(t, ca, nil))
	for i := range 2 {
		code, err := call(outsider, base+"/snapshot/full")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(code).To(Equal(http.StatusOK), "trigger %d within the burst", i+1)
	}
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		req, err := http.NewRequest(method, base+"/snapshot/full", nil)
		g.Expect(err).NotTo(HaveOccurred())
		resp, err := outsider.Do(req)
		g.Expect(err).NotTo(HaveOccurred())
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		g.Expect(resp.StatusCode).To(Equal(http.StatusTooManyRequests), "%s beyond the burst: %s", method, body)
		retryAfter, err := strconv.Atoi(resp.Header.Get("Retry-After"))
		g.Expect(err).NotTo(HaveOccurred(), "Retry-After in whole seconds")
		g.Expect(retryAfter).To(BeNumerically(">", 0))
	}
	g.Expect(snaps.calls).To(Equal([]string{"full", "full"}), "refused triggers take no snapshot")

	// Final full snapshots have a budget of their own: whoever spends the full snapshots' budget cannot hold
	// up gardenlet's final snapshot before a control-plane migration.
	for i := range 2 {
		code, err := call(outsider, base+"/snapshot/full?final=true")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(code).To(Equal(http.StatusOK), "final trigger %d within its own burst", i+1)
	}
	code, err := call(outsider, base+"/snapshot/full?final=true")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(code).To(Equal(http.StatusTooManyRequests), "final triggers beyond their burst")

	code, err = call(outsider, base+"/snapshot/delta")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(code).To(Equal(http.StatusOK), "delta snapshots have their own budget")

	code, err = call(caller.HTTPClient(tlsFor(t, ca, &clientPair)), base+"/snapshot/full")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(code).To(Equal(http.StatusOK), "a client of the backup-restore CA is not limited")
	local := servedOn(t, "127.0.0.1:0", s, &serverPair)
	code, err = call(ca.HTTPClient(), local+"/snapshot/full")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(code).To(Equal(http.StatusOK), "a caller inside the pod is not limited")
	g.Expect(snaps.calls).To(Equal([]string{"full", "full", "full", "full", "delta", "full", "full"}))
}
