package app

import (
	"net/http"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/gardener-etcd/gardener-etcd/pkg/webhook/etcdvalidation"
	"github.com/gardener-etcd/gardener-etcd/pkg/webhook/protection"
)

// registeredPaths tells, for each path, whether the manager built from cfg serves a webhook there.
func registeredPaths(t *testing.T, cfg Config, paths ...string) map[string]bool {
	t.Helper()
	g := NewWithT(t)
	// A bare manager: the controllers need an apiserver at start-up, the webhook wiring does not.
	mgr, err := ctrl.NewManager(&rest.Config{Host: "https://127.0.0.1:1"}, ctrl.Options{
		Scheme: Scheme(), Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		WebhookServer: webhook.NewServer(webhook.Options{Port: cfg.Webhooks.Port}),
	})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(addWebhooks(mgr, cfg.Webhooks)).To(Succeed())
	served := map[string]bool{}
	for _, path := range paths {
		req, _ := http.NewRequest(http.MethodPost, "https://druid"+path, nil)
		_, pattern := mgr.GetWebhookServer().WebhookMux().Handler(req)
		served[path] = pattern == path
	}
	return served
}

// Switching the component protection off in the operator configuration (as upstream's
// webhooks.etcdComponentProtection.enabled: false) leaves the Etcd validation webhook served: the two
// are switched independently, and validation runs wherever the webhook server does.
func TestProtectionSwitchedOffKeepsEtcdValidation(t *testing.T) {
	g := NewWithT(t)
	cfg, err := resolve(t, header+`
server: {webhooks: {port: 10250, serverCertDir: /etc/webhook-server-tls}}
webhooks: {etcdComponentProtection: {enabled: false}}
`, images...)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.Validate()).To(Succeed())
	g.Expect(registeredPaths(t, cfg, etcdvalidation.EtcdPath, etcdvalidation.EtcdOpsTaskPath, protection.Path)).To(Equal(map[string]bool{
		etcdvalidation.EtcdPath: true, etcdvalidation.EtcdOpsTaskPath: true, protection.Path: false,
	}))

	cfg, err = resolve(t, "", append(images, "--enable-webhooks", "--enable-etcd-component-protection=false")...)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.Validate()).To(Succeed(), "no reconciler service account is needed without the protection webhook")
	g.Expect(registeredPaths(t, cfg, etcdvalidation.EtcdPath, protection.Path)).To(Equal(map[string]bool{
		etcdvalidation.EtcdPath: true, protection.Path: false,
	}))
}

// With both switched on, both are served.
func TestWebhooksServeValidationAndProtection(t *testing.T) {
	g := NewWithT(t)
	cfg, err := resolve(t, testFile, images...)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(registeredPaths(t, cfg, etcdvalidation.EtcdPath, protection.Path)).To(Equal(map[string]bool{
		etcdvalidation.EtcdPath: true, protection.Path: true,
	}))
}
