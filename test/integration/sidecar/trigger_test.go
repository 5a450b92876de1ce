package sidecar

import (
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/snapshot"
	"github.com/gardener-etcd/gardener-etcd/test/support/podnettest"
	"github.com/gardener-etcd/gardener-etcd/test/support/testpki"
)

// Gardener's gardenlet asks for a final full snapshot before a control-plane migration and after an
// encryption-key rotation: GET https://<etcd>-client.<ns>:8080/snapshot/full?final=true, verifying the
// server with the etcd CA bundle and presenting no client certificate (Gardener's
// pkg/component/shared/etcd.go SnapshotEtcd, pkg/component/etcd/etcd/etcd.go Snapshot). From another pod,
// such a client gets the final snapshot, and it is in the store; the same client is refused the
// initialization endpoints (they restore and move data) and, after a burst of triggers, gets 429 with
// Retry-After.
func TestGardenletsFinalSnapshotFromAnotherPodWithoutClientCertificate(t *testing.T) {
	caller := podnettest.NewCaller(t)
	g := NewWithT(t)
	c := newCluster(t, 1)
	p := c.pods[0]
	ca := testpki.NewCA(t)
	serviceName := etcdName + "-client." + c.namespace
	server := ca.Issue(t, "backup-restore-server", serviceName)
	p.sidecar.ServerCert, p.sidecar.ServerKey, p.sidecar.ServerCACert = server.CertFile, server.KeyFile, ca.CertFile
	p.wrapper.BackupRestoreTLSEnabled, p.wrapper.BackupRestoreCACertBundlePath = true, ca.CertFile
	cli := c.startAll()
	rev := put(t, cli, "before-migration/", 20)

	gardenlet := caller.HTTPClient(&tls.Config{RootCAs: ca.Pool(), ServerName: serviceName, MinVersion: tls.VersionTLS12})
	base := "https://" + net.JoinHostPort(caller.Host.String(), strconv.Itoa(p.sidecar.ServerPort))
	call := func(path string) (*http.Response, []byte) {
		resp, err := gardenlet.Get(base + path)
		g.Expect(err).NotTo(HaveOccurred(), path)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		g.Expect(err).NotTo(HaveOccurred())
		return resp, body
	}

	resp, body := call("/snapshot/full?final=true")
	g.Expect(resp.StatusCode).To(Equal(http.StatusOK), "%s", body)
	var final snapshot.Snapshot
	g.Expect(json.Unmarshal(body, &final)).To(Succeed())
	g.Expect(final.IsFinal).To(BeTrue())
	g.Expect(final.LastRevision).To(Equal(rev))
	g.Expect(c.snapshots()).To(ContainElement(And(HaveField("SnapName", final.SnapName), HaveField("IsFinal", true))), "the final snapshot is in the store")

	for _, path := range []string{"/initialization/start?mode=full", "/initialization/status"} {
		resp, body = call(path)
		g.Expect(resp.StatusCode).To(Equal(http.StatusForbidden), "%s: %s", path, body)
	}

	// The default budget is a few triggers; a caller that keeps asking is told to come back later.
	var limited *http.Response
	for range 10 {
		if resp, _ = call("/snapshot/full"); resp.StatusCode == http.StatusTooManyRequests {
			limited = resp
			break
		}
		g.Expect(resp.StatusCode).To(Equal(http.StatusOK))
	}
	g.Expect(limited).NotTo(BeNil(), "a burst of triggers is limited")
	g.Expect(limited.Header.Get("Retry-After")).To(MatchRegexp(`^[1-9][0-9]*$`))
	g.Expect(p.ready()).To(BeTrue(), "etcd keeps serving")
}
