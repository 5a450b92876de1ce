package app

import (
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/client-go/kubernetes"
)

const testKubeconfig = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`

// The client settings must not depend on how the kubeconfig is found: --kubeconfig once fell back to
// client-go's 5 QPS / burst 10 while $KUBECONFIG and in-cluster ran without a client-side limit, so that
// 50 Etcds took 48 s instead of 4.5 s.
func TestClientSettingsDoNotDependOnHowTheKubeconfigIsFound(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	NewWithT(t).Expect(os.WriteFile(path, []byte(testKubeconfig), 0o600)).To(Succeed())

	for _, tc := range []struct {
		name  string
		args  []string
		qps   float32
		burst int
	}{
		{name: "defaults", qps: DefaultClientQPS, burst: DefaultClientBurst},
		{name: "flags", args: []string{"--kube-api-qps=42", "--kube-api-burst=84"}, qps: 42, burst: 84},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			t.Setenv("KUBECONFIG", "")
			cfg, err := resolve(t, "", append([]string{"--kubeconfig", path}, tc.args...)...)
			g.Expect(err).NotTo(HaveOccurred())
			viaFlag, err := restConfigFor(cfg)
			g.Expect(err).NotTo(HaveOccurred())

			t.Setenv("KUBECONFIG", path)
			cfg, err = resolve(t, "", tc.args...)
			g.Expect(err).NotTo(HaveOccurred())
			viaEnv, err := restConfigFor(cfg)
			g.Expect(err).NotTo(HaveOccurred())

			for way, rc := range map[string]struct {
				qps   float32
				burst int
				host  string
			}{"--kubeconfig": {viaFlag.QPS, viaFlag.Burst, viaFlag.Host}, "$KUBECONFIG": {viaEnv.QPS, viaEnv.Burst, viaEnv.Host}} {
				g.Expect(rc.host).To(Equal("https://127.0.0.1:6443"), way)
				g.Expect(rc.qps).To(Equal(tc.qps), way)
				g.Expect(rc.burst).To(Equal(tc.burst), way)
			}
		})
	}
}

// druid asks the apiserver for uncompressed responses: kube-apiserver gzips each flush of a WatchList
// stream for a client that accepts gzip, which costs it CPU for every event druid's informers receive.
func TestDruidAsksForUncompressedResponses(t *testing.T) {
	g := NewWithT(t)
	encodings := make(chan string, 1)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case encodings <- r.Header.Get("Accept-Encoding"):
		default:
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"major":"1","minor":"34","gitVersion":"v1.34.0"}`))
	}))
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	ca := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	kubeconfig := strings.Replace(testKubeconfig, `{server: "https://127.0.0.1:6443"}`,
		fmt.Sprintf(`{server: %q, certificate-authority-data: %s}`, srv.URL, ca), 1)
	g.Expect(os.WriteFile(path, []byte(kubeconfig), 0o600)).To(Succeed())
	t.Setenv("KUBECONFIG", "")
	cfg, err := resolve(t, "", "--kubeconfig", path)
	g.Expect(err).NotTo(HaveOccurred())
	rc, err := restConfigFor(cfg)
	g.Expect(err).NotTo(HaveOccurred())
	clients, err := kubernetes.NewForConfig(rc)
	g.Expect(err).NotTo(HaveOccurred())

	_, err = clients.Discovery().ServerVersion()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(<-encodings).NotTo(ContainSubstring("gzip"))
}
