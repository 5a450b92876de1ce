// Package webhook tests druid's Etcd validation and component protection webhooks as the apiserver calls
// them: registered through webhook configurations and served by a controller-runtime webhook server.
package webhook

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/gardener-etcd/gardener-etcd/pkg/webhook/etcdvalidation"
	"github.com/gardener-etcd/gardener-etcd/pkg/webhook/protection"
	"github.com/gardener-etcd/gardener-etcd/test/support/envtest"
)

const (
	druidUser  = "system:serviceaccount:garden:etcd-druid"
	exemptUser = "system:serviceaccount:garden:recovery-tool"
	// seedControllerManager is the user a seed's kube-controller-manager authenticates as when it is not
	// one of protection.DefaultPodControllerUsers; druid is configured with it.
	seedControllerManager = "seed:kube-controller-manager"
)

// podControllerUsers and garbageCollectorUsers are druid's configured lists here: the defaults and the
// seed's own kube-controller-manager.
var (
	podControllerUsers    = append(append([]string{}, protection.DefaultPodControllerUsers...), seedControllerManager)
	garbageCollectorUsers = append(append([]string{}, protection.DefaultGarbageCollectorUsers...), seedControllerManager)
)

var env *envtest.Env

func TestMain(m *testing.M) {
	service := admissionregistrationv1.ServiceReference{Name: "etcd-druid", Namespace: "garden"}
	envtest.MainWith(m, &env, envtest.Options{Webhooks: ctrlenvtest.WebhookInstallOptions{
		ValidatingWebhooks: []*admissionregistrationv1.ValidatingWebhookConfiguration{
			etcdvalidation.WebhookConfiguration(service, nil),
			protection.WebhookConfiguration(service, nil, podControllerUsers),
		},
	}}, startWebhookServer)
}

func startWebhookServer(ctx context.Context, env *envtest.Env) error {
	opts := env.WebhookInstallOptions
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:  envtest.Scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
		WebhookServer: webhook.NewServer(webhook.Options{
			Host: opts.LocalServingHost, Port: opts.LocalServingPort, CertDir: opts.LocalServingCertDir,
		}),
	})
	if err != nil {
		return err
	}
	if err := etcdvalidation.AddToManager(mgr); err != nil {
		return err
	}
	protection.AddToManager(mgr, druidUser, []string{exemptUser}, podControllerUsers, garbageCollectorUsers)
	go func() {
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	}()
	// Serving starts asynchronously; wait until TLS connections are accepted.
	address := net.JoinHostPort(opts.LocalServingHost, strconv.Itoa(opts.LocalServingPort))
	return envtest.WaitWebhookServing(address)
}

// clientAs returns a client that acts as user. Membership in system:masters lets the apiserver's RBAC
// authorize the request, so that only the webhook decides.
func clientAs(t *testing.T, user string) client.Client {
	t.Helper()
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:masters", "system:authenticated"}}
	c, err := client.New(cfg, client.Options{Scheme: envtest.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
