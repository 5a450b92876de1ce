package pod

import (
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/member"
	"github.com/gardener-etcd/gardener-etcd/pkg/podwire"
	"github.com/gardener-etcd/gardener-etcd/test/support/podnettest"
)

func fetch(c *http.Client, method, url string) (int, string, error) {
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// POST /stop restarts etcd: a caller in another pod (another network namespace) gets 403 and etcd keeps
// running; the sidecar of the pod (loopback) may stop it. GET /phase and /readyz are open reads.
func TestStopIsRefusedToCallersOutsideThePod(t *testing.T) {
	caller := podnettest.NewCaller(t)
	g := NewWithT(t)
	p := newPod(t, nil)
	p.wrapper.ListenHost = "" // all interfaces, as in a pod: the kubelet probes the pod IP
	done := p.start(t.Context())
	g.Eventually(p.readyz, time.Minute, 100*time.Millisecond).Should(Equal(http.StatusOK))

	outside := "http://" + net.JoinHostPort(caller.Host.String(), strconv.Itoa(p.wrapper.WrapperPort))
	outsider := caller.HTTPClient(nil)
	code, body, err := fetch(outsider, http.MethodPost, outside+"/stop")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(code).To(Equal(http.StatusForbidden), body)
	code, body, err = fetch(outsider, http.MethodGet, outside+"/phase")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(code).To(Equal(http.StatusOK))
	g.Expect(body).To(Equal(string(podwire.PhaseRunning)))
	code, _, err = fetch(outsider, http.MethodGet, outside+"/readyz")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(code).To(Equal(http.StatusOK))
	g.Consistently(done, 2*time.Second, 100*time.Millisecond).ShouldNot(Receive(), "etcd keeps running")
	g.Expect(p.readyz()).To(Equal(http.StatusOK))

	g.Expect(member.WrapperRestarter{URL: p.wrapperURL()}.RestartEtcd(t.Context())).To(Succeed(), "the pod's sidecar may stop etcd")
	g.Eventually(done, time.Minute).Should(Receive(BeNil()))
}
