package app

import (
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
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
