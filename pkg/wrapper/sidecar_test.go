package wrapper

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"

	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
)

// The upstream sidecar answers GET /config only after asking the cluster for its members and for a learner
// (gardener/etcd-backup-restore pkg/server/httpAPI.go serveConfig: up to 5 s twice, then up to 30 s), which in
// a fresh multi-member bootstrap, with no member serving yet, takes longer than the bound of the wrapper's
// other requests. The configuration is waited for up to configTimeout instead.
func TestConfigWaitsLongerThanOtherRequests(t *testing.T) {
	g := NewWithT(t)
	const slow = 300 * time.Millisecond
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(slow)
		_, _ = w.Write([]byte("name: etcd-main-0\n"))
	}))
	defer srv.Close()
	s, err := newSidecar(Options{BackupRestoreHostPort: strings.TrimPrefix(srv.URL, "http://")})
	g.Expect(err).NotTo(HaveOccurred())
	s.client.Timeout = slow / 3 // the bound of an ordinary request, shortened for the test

	_, _, err = s.get(t.Context(), "/initialization/status")
	g.Expect(err).To(HaveOccurred(), "an ordinary request is bounded")
	body, err := s.config(t.Context())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(body)).To(Equal("name: etcd-main-0\n"))
}

// A sanity check takes milliseconds: right after asking for the initialization the wrapper looks at its
// status again instead of waiting a poll interval first (here an hour, which the test would not outlast).
func TestInitializationIsCheckedRightAfterTheRequest(t *testing.T) {
	g := NewWithT(t)
	var started atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/initialization/start":
			started.Store(true)
		case "/initialization/status":
			status := podwire.InitNew
			if started.Load() {
				status = podwire.InitSuccessful
			}
			_, _ = w.Write([]byte(status))
		}
	}))
	defer srv.Close()
	s, err := newSidecar(Options{BackupRestoreHostPort: strings.TrimPrefix(srv.URL, "http://")})
	g.Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	g.Expect(s.initialize(ctx, podwire.InitSanity, time.Hour, logr.Discard())).To(Succeed())
}
