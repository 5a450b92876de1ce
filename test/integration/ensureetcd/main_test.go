// Package ensureetcd_test checks the EnsureETCD webhook as the apiserver calls it: registered through the
// MutatingWebhookConfiguration the chart ships (its match condition included) and served by a
// controller-runtime webhook server in the test process.
package ensureetcd_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/gardener-etcd/gardener-etcd/pkg/webhook/ensureetcd"
	"github.com/gardener-etcd/gardener-etcd/test/support/envtest"
)

var env *envtest.Env

// config is what the test's webhook applies.
var config = ensureetcd.Config{
	Main:   ensureetcd.RoleDefaults{StorageClassName: "provider-fast", StorageCapacity: ptr.To(resource.MustParse("25Gi"))},
	Events: ensureetcd.RoleDefaults{StorageClassName: "provider-standard", StorageCapacity: ptr.To(resource.MustParse("10Gi"))},
}

func TestMain(m *testing.M) {
	service := admissionregistrationv1.ServiceReference{Name: "gardener-extension-backup", Namespace: "garden"}
	envtest.MainWith(m, &env, envtest.Options{Webhooks: ctrlenvtest.WebhookInstallOptions{
		MutatingWebhooks: []*admissionregistrationv1.MutatingWebhookConfiguration{ensureetcd.WebhookConfiguration(service, nil)},
	}}, startWebhookServer)
}

func startWebhookServer(ctx context.Context, env *envtest.Env) error {
	opts := env.WebhookInstallOptions
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 envtest.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		WebhookServer: webhook.NewServer(webhook.Options{
			Host: opts.LocalServingHost, Port: opts.LocalServingPort, CertDir: opts.LocalServingCertDir,
		}),
	})
	if err != nil {
		return err
	}
	if err := ensureetcd.AddToManager(mgr, config); err != nil {
		return err
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	}()
	address := net.JoinHostPort(opts.LocalServingHost, strconv.Itoa(opts.LocalServingPort))
	return envtest.WaitWebhookServing(address)
}
