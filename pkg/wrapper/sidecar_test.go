package wrapper

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
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
