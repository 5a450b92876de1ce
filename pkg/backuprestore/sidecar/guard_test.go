package sidecar

import (
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
)

// The guard admits an initialization only when the wrapper says it waits for one; a wrapper in another
// phase or one that answers with an error refuses it; one without /phase or not listening yet (Gardener's
// released wrapper, before and after its initialization) leaves the decision to the data-dir locks. (The data-dir lock half is tested against real etcd in
// TestInitializationStartOnARunningMemberIsRefused and in package initializer.)
func TestInitializationGuardAsksTheWrapper(t *testing.T) {
	g := NewWithT(t)
	dataDir := filepath.Join(t.TempDir(), "new.etcd")
	for phase, admitted := range map[podwire.WrapperPhase]bool{
		podwire.PhaseWaitingForInitialization: true,
		podwire.PhaseStartingEtcd:             false,
		podwire.PhaseRunning:                  false,
		podwire.PhaseStopped:                  false,
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/phase" {
				http.NotFound(w, r)
				return
			}
			_, _ = w.Write([]byte(phase))
		}))
		err := initializationGuard(dataDir, srv.URL)(t.Context())
		srv.Close()
		if admitted {
			g.Expect(err).NotTo(HaveOccurred(), string(phase))
		} else {
			g.Expect(err).To(MatchError(ContainSubstring(string(phase))))
		}
	}
	// Gardener's released etcd-wrapper listens only once its initialization is done, and has no /phase:
	// the data-dir locks alone decide.
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	g.Expect(initializationGuard(dataDir, closed.URL)(t.Context())).To(Succeed(), "nothing listens on the wrapper port")
	legacy := httptest.NewServer(http.NotFoundHandler())
	defer legacy.Close()
	g.Expect(initializationGuard(dataDir, legacy.URL)(t.Context())).To(Succeed())
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) }))
	defer failing.Close()
	g.Expect(initializationGuard(dataDir, failing.URL)(t.Context())).To(MatchError(ContainSubstring("500")))
}

// The guard asks the wrapper on --etcd-wrapper-port at the host of --endpoints: with the port druid passes
// for spec.etcd.wrapperPort, not 9095.
func TestInitializationGuardAsksTheConfiguredWrapperPort(t *testing.T) {
	g := NewWithT(t)
	var asked atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/phase" {
			asked.Add(1)
		}
		_, _ = w.Write([]byte(podwire.PhaseWaitingForInitialization))
	}))
	defer srv.Close()
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	g.Expect(err).NotTo(HaveOccurred())

	o, err := parse(t, []string{"server", "--endpoints=http://127.0.0.1:2379", "--etcd-wrapper-port=" + port})
	g.Expect(err).NotTo(HaveOccurred())
	wrapperURL, err := o.wrapperURL()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(initializationGuard(filepath.Join(t.TempDir(), "new.etcd"), wrapperURL)(t.Context())).To(Succeed())
	g.Expect(asked.Load()).To(BeEquivalentTo(1), "the wrapper was asked on the configured port")

	_, err = parse(t, []string{"server", "--endpoints=http://127.0.0.1:2379", "--etcd-wrapper-port=0"})
	g.Expect(err).To(MatchError(ContainSubstring("--etcd-wrapper-port")))
}
