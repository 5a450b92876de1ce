package wrapper

import (
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

// One port answers a plain HTTP client (our druid's probe, the sidecar) and an HTTPS client that does not
// verify the certificate (the kubelet running the upstream druid's HTTPS probe); a connection that sends
// nothing holds up neither.
func TestWrapperPortServesPlainAndTLS(t *testing.T) {
	g := NewWithT(t)
	cert, err := selfSignedCertificate()
	g.Expect(err).NotTo(HaveOccurred())
	l, err := net.Listen("tcp", "127.0.0.1:0")
	g.Expect(err).NotTo(HaveOccurred())
	mux := http.NewServeMux()
	mux.HandleFunc("GET /readyz", func(rw http.ResponseWriter, _ *http.Request) {
		_, _ = rw.Write([]byte("ok"))
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	servePlainAndTLS(srv, l, cert)
	t.Cleanup(func() { _ = srv.Close(); _ = l.Close() })
	addr := l.Addr().String()

	idle, err := net.Dial("tcp", addr)
	g.Expect(err).NotTo(HaveOccurred())
	defer idle.Close()

	get := func(c *http.Client, url string) string {
		resp, err := c.Get(url)
		g.Expect(err).NotTo(HaveOccurred())
		defer resp.Body.Close()
		g.Expect(resp.StatusCode).To(Equal(http.StatusOK))
		b, err := io.ReadAll(resp.Body)
		g.Expect(err).NotTo(HaveOccurred())
		return string(b)
	}
	plain := &http.Client{Timeout: 5 * time.Second}
	g.Expect(get(plain, "http://"+addr+"/readyz")).To(Equal("ok"))
	probe := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // as the kubelet's HTTPS probes
	}}
	g.Expect(get(probe, "https://"+addr+"/readyz")).To(Equal("ok"))
	g.Expect(get(plain, "http://"+addr+"/readyz")).To(Equal("ok"))
}
