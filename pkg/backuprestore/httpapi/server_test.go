package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
	"github.com/gardener-etcd/gardener-etcd/test/support/testpki"
)

// gatedInitializer blocks each Initialize until the test releases it with the outcome to return, so the
// test observes the Progress state deterministically.
type gatedInitializer struct {
	modes   chan podwire.InitMode
	results chan error
}

func newGatedInitializer() *gatedInitializer {
	return &gatedInitializer{modes: make(chan podwire.InitMode, 10), results: make(chan error)}
}

func (g *gatedInitializer) Initialize(ctx context.Context, mode podwire.InitMode) error {
	g.modes <- mode
	select {
	case err := <-g.results:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func get(t *testing.T, c *http.Client, url string) (int, http.Header, string) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(body)
}

func newTestServer(t *testing.T, opts Options) *httptest.Server {
	t.Helper()
	opts.Log = testr.New(t)
	if opts.Initializer == nil {
		opts.Initializer = DataDirOnlyInitializer{DataDir: t.TempDir()}
	}
	if opts.Config == nil {
		opts.Config = func(context.Context) ([]byte, error) { return []byte("name: m0\n"), nil }
	}
	srv := httptest.NewServer(New(t.Context(), opts))
	t.Cleanup(srv.Close)
	return srv
}

func statusOf(t *testing.T, srv *httptest.Server) func() string {
	return func() string {
		_, _, body := get(t, srv.Client(), srv.URL+"/initialization/status")
		return body
	}
}

func TestInitializationRunsOnceAndAFinalStatusIsReadOnce(t *testing.T) {
	g := NewWithT(t)
	init := newGatedInitializer()
	srv := newTestServer(t, Options{Initializer: init})
	status := statusOf(t, srv)

	g.Expect(status()).To(Equal("New"))
	code, _, _ := get(t, srv.Client(), srv.URL+"/initialization/start?mode=sanity")
	g.Expect(code).To(Equal(http.StatusOK))
	g.Expect(<-init.modes).To(Equal(podwire.InitSanity))
	g.Expect(status()).To(Equal("Progress"))
	get(t, srv.Client(), srv.URL+"/initialization/start?mode=full")
	g.Consistently(init.modes, 200*time.Millisecond).ShouldNot(Receive(), "a running initialization is not started twice")

	init.results <- nil
	g.Eventually(status).Should(Equal("Successful"))
	g.Expect(status()).To(Equal("New"), "reading a final status resets it")

	get(t, srv.Client(), srv.URL+"/initialization/start")
	g.Expect(<-init.modes).To(Equal(podwire.InitFull), "no mode means full")
	init.results <- errors.New("data dir is\ncorrupt")
	var header http.Header
	g.Eventually(func() string {
		var body string
		_, header, body = get(t, srv.Client(), srv.URL+"/initialization/status")
		return body
	}).Should(Equal("Failed"))
	g.Expect(header.Get(podwire.HeaderInitializationError)).To(Equal("data dir is corrupt"))
	g.Expect(status()).To(Equal("New"))

	code, _, body := get(t, srv.Client(), srv.URL+"/initialization/start?mode=quick")
	g.Expect(code).To(Equal(http.StatusBadRequest))
	g.Expect(body).To(ContainSubstring("quick"))
	g.Expect(status()).To(Equal("New"))
}

func TestConfigAndHealth(t *testing.T) {
	g := NewWithT(t)
	var healthy, fail atomic.Bool
	healthy.Store(true)
	srv := newTestServer(t, Options{
		Config: func(context.Context) ([]byte, error) {
			if fail.Load() {
				return nil, errors.New("no entry for pod")
			}
			return []byte("name: etcd-main-0\n"), nil
		},
		Health: func(context.Context) bool { return healthy.Load() },
	})
	code, header, body := get(t, srv.Client(), srv.URL+"/config")
	g.Expect(code).To(Equal(http.StatusOK))
	g.Expect(header.Get("Content-Type")).To(Equal("application/yaml"))
	g.Expect(body).To(Equal("name: etcd-main-0\n"))
	fail.Store(true)
	code, _, body = get(t, srv.Client(), srv.URL+"/config")
	g.Expect(code).To(Equal(http.StatusInternalServerError))
	g.Expect(body).To(ContainSubstring("no entry for pod"))

	code, _, body = get(t, srv.Client(), srv.URL+"/healthz")
	g.Expect(code).To(Equal(http.StatusOK))
	g.Expect(body).To(MatchJSON(`{"health": true}`))
	healthy.Store(false)
	code, _, body = get(t, srv.Client(), srv.URL+"/healthz")
	g.Expect(code).To(Equal(http.StatusServiceUnavailable))
	g.Expect(body).To(MatchJSON(`{"health": false}`))

	// Liveness does not follow etcd's health: the process answers, so it lives.
	code, _, body = get(t, srv.Client(), srv.URL+"/livez")
	g.Expect(code).To(Equal(http.StatusOK))
	g.Expect(body).To(Equal("ok"))
}

func TestMetricsServeTheGivenRegistry(t *testing.T) {
	g := NewWithT(t)
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "etcdbr_test_total", Help: "test"})
	reg.MustRegister(c)
	c.Add(3)
	srv := newTestServer(t, Options{Gatherer: reg})
	code, _, body := get(t, srv.Client(), srv.URL+"/metrics")
	g.Expect(code).To(Equal(http.StatusOK))
	g.Expect(body).To(ContainSubstring("etcdbr_test_total 3"))
}

// --enable-profiling serves pprof's index (to callers in the pod, as the test's loopback client is);
// without it the path is unknown.
func TestProfilingOnlyWhenEnabled(t *testing.T) {
	g := NewWithT(t)
	on := newTestServer(t, Options{EnableProfiling: true})
	code, _, body := get(t, on.Client(), on.URL+"/debug/pprof/")
	g.Expect(code).To(Equal(http.StatusOK))
	g.Expect(body).To(ContainSubstring("goroutine"))
	off := newTestServer(t, Options{})
	code, _, _ = get(t, off.Client(), off.URL+"/debug/pprof/")
	g.Expect(code).To(Equal(http.StatusNotFound))
}

func TestServeWithTLS(t *testing.T) {
	g := NewWithT(t)
	ca := testpki.NewCA(t)
	pair := ca.Issue(t, "sidecar")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	g.Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(t.Context())
	s := New(ctx, Options{Initializer: DataDirOnlyInitializer{DataDir: t.TempDir()}, Log: testr.New(t)})
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, l, pair.CertFile, pair.KeyFile) }()

	code, _, body := get(t, ca.HTTPClient(), "https://"+l.Addr().String()+"/initialization/status")
	g.Expect(code).To(Equal(http.StatusOK))
	g.Expect(body).To(Equal("New"))
	_, err = http.Get("https://" + l.Addr().String() + "/healthz")
	g.Expect(err).To(MatchError(ContainSubstring("certificate")), "a client that does not trust the CA is refused")
	resp, err := http.Get("http://" + l.Addr().String() + "/healthz")
	if err == nil {
		g.Expect(resp.StatusCode).To(Equal(http.StatusBadRequest), "plain HTTP is not served on a TLS port")
		resp.Body.Close()
	}

	cancel()
	g.Eventually(done, 10*time.Second).Should(Receive(BeNil()))
	_, err = net.DialTimeout("tcp", l.Addr().String(), time.Second)
	g.Expect(err).To(HaveOccurred(), "the port is released on shutdown")
}

func TestServeReportsAListenerFailure(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_ = l.Close()
	s := New(t.Context(), Options{Log: testr.New(t)})
	if err := s.Serve(t.Context(), l, "", ""); err == nil || !strings.Contains(err.Error(), "sidecar HTTP server") {
		t.Fatalf("Serve on a closed listener = %v, want an error", err)
	}
}

func decode[T any](t *testing.T, body string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("decoding %q: %v", body, err)
	}
	return v
}
