package pod

import (
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/member"
	"github.com/gardener-etcd/gardener-etcd/pkg/etcdpod"
	"github.com/gardener-etcd/gardener-etcd/test/support/etcdserver"
	"github.com/gardener-etcd/gardener-etcd/test/support/testpki"
)

func (p *localPod) sidecarURL() string {
	return "http://127.0.0.1:" + strconv.Itoa(p.sidecar.ServerPort)
}

func do(t *testing.T, method, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// movedAside lists what lies beside the data dir under its name (moved-aside copies).
func movedAside(t *testing.T, dataDir string) []string {
	t.Helper()
	matches, err := filepath.Glob(dataDir + ".*")
	if err != nil {
		t.Fatal(err)
	}
	return matches
}

// Through the pod's HTTP APIs: GET /initialization/start on a running member
// made the sidecar move the data dir aside under etcd, and the wrapper's POST /stop then restarted etcd
// on the empty replacement (50 keys → 0). The start must be refused with 409 and change nothing, so the
// restart finds every key.
func TestInitializationStartOnARunningMemberIsRefused(t *testing.T) {
	g := NewWithT(t)
	p := newLocalPod(t)
	p.writeTemplate(nil)
	stop := p.run()
	defer stop()
	g.Eventually(p.ready, time.Minute, 100*time.Millisecond).Should(BeTrue())
	cli := etcdserver.NewClient(t, p.clientURL.String())
	for i := range 50 {
		_, err := cli.Put(t.Context(), "k/"+strconv.Itoa(i), "v")
		g.Expect(err).NotTo(HaveOccurred())
	}

	code, body := do(t, http.MethodGet, p.sidecarURL()+"/initialization/start?mode=full")
	g.Eventually(func() string { _, s := do(t, http.MethodGet, p.sidecarURL()+"/initialization/status"); return s },
		time.Minute, 100*time.Millisecond).ShouldNot(Equal("Progress"))
	stopCode, _ := do(t, http.MethodPost, "http://127.0.0.1:"+strconv.Itoa(p.wrapper.WrapperPort)+"/stop")
	g.Expect(stopCode).To(Equal(http.StatusOK))
	g.Eventually(p.wrapperExits.Load, time.Minute, 100*time.Millisecond).Should(Equal(int32(1)))
	g.Eventually(p.ready, time.Minute, 100*time.Millisecond).Should(BeTrue())
	resp, err := cli.Get(t.Context(), "k/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(resp.Count).To(Equal(int64(50)), "every key survives the start request and the restart")
	g.Expect(movedAside(t, p.dataDir)).To(BeEmpty(), "nothing was moved aside")
	g.Expect(code).To(Equal(http.StatusConflict), body)
	g.Expect(body).To(ContainSubstring("etcd"))
}

// GET /config recorded the rendered configuration as the one
// etcd runs with and woke the membership loop, so any caller could make the sidecar switch the member's
// peer URLs (a membership change) and restart etcd on a template the running etcd was not started with.
// GET /config must have no side effects.
func TestGetConfigChangesNothing(t *testing.T) {
	g := NewWithT(t)
	p := newLocalPod(t)
	httpPeer := p.writeTemplate(nil)
	stop := p.run()
	defer stop()
	g.Eventually(p.ready, time.Minute, 100*time.Millisecond).Should(BeTrue())
	cli := etcdserver.NewClient(t, p.clientURL.String())

	// The template changes while the pod runs (druid's next rolling update is not there yet).
	ca := testpki.NewCA(t)
	pair := ca.Issue(t, "peer")
	p.writeTemplate(&etcdpod.SecurityConfig{CertFile: pair.CertFile, KeyFile: pair.KeyFile, TrustedCAFile: ca.CertFile, ClientCertAuth: true})
	code, _ := do(t, http.MethodGet, p.sidecarURL()+"/config")
	g.Expect(code).To(Equal(http.StatusOK))

	peerURLs := func() []string {
		local, err := member.LocalMember(t.Context(), cli, p.clientURL.String())
		if err != nil {
			return nil
		}
		return local.Member.PeerURLs
	}
	g.Consistently(func() []string { return peerURLs() }, 5*time.Second, 200*time.Millisecond).Should(Equal([]string{httpPeer}),
		"the member's peer URLs are not switched by a GET")
	g.Expect(p.wrapperExits.Load()).To(BeZero(), "etcd was not restarted by a GET")
	// What GET /config serves is the configuration the last initialization prepared for the running etcd.
	_, body := do(t, http.MethodGet, p.sidecarURL()+"/config")
	g.Expect(body).To(ContainSubstring("initial-advertise-peer-urls: " + httpPeer))
}
