// Package backupextension_test runs the BackupBucket and BackupEntry controllers and the extension's
// validating webhook in-process against a real apiserver (envtest) and real stores (a host directory,
// versitygw), and checks what gardenlet and the Gardener-side etcd component rely on.
package backupextension_test

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/backupvalidation"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/controller"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/controller/backupbucket"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/controller/backupentry"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/provider/builtin"
	"github.com/gardener-etcd/gardener-etcd/test/support/envtest"
)

var (
	env *envtest.Env
	// localRoot is the default directory of local buckets for the whole suite.
	localRoot string
)

// allowedGeneratedSecretNamespace is a namespace the suite allows a BackupBucket's annotation to name for its
// generated secret, besides garden.
const allowedGeneratedSecretNamespace = "backup-secrets"

// bypassWebhookLabel keeps an object away from the validating webhook in this suite only (the suite's copy
// of the webhook configuration excludes it by object selector). It stands for an object stored before the
// webhook existed or admitted while it was bypassed, so tests can show that the controllers refuse it on
// their own.
const bypassWebhookLabel = "test.gardener-etcd.io/bypass-webhook"

// webhookConfiguration is the extension's validating webhook configuration as the chart installs it, except
// for the suite's bypass selector.
func webhookConfiguration() *admissionregistrationv1.ValidatingWebhookConfiguration {
	cfg := backupvalidation.WebhookConfiguration(admissionregistrationv1.ServiceReference{Name: "gardener-extension-backup", Namespace: "garden"}, nil, builtin.Types())
	for i := range cfg.Webhooks {
		cfg.Webhooks[i].ObjectSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: bypassWebhookLabel, Operator: metav1.LabelSelectorOpDoesNotExist},
		}}
	}
	return cfg
}

// TestMain skips the package under -short, as envtest.Main does: unit runs need no binaries.
func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		fmt.Println("envtest: skipping integration tests in -short mode")
		os.Exit(0)
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	if localRoot, err = os.MkdirTemp("", "backupextension-local-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(localRoot)

	webhooks := ctrlenvtest.WebhookInstallOptions{ValidatingWebhooks: []*admissionregistrationv1.ValidatingWebhookConfiguration{webhookConfiguration()}}
	if env, err = envtest.Start(envtest.Options{Webhooks: webhooks}); err != nil {
		fmt.Fprintln(os.Stderr, "envtest:", err)
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping envtest:", err)
		}
	}()
	for _, namespace := range []string{"garden", allowedGeneratedSecretNamespace} {
		if err := env.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}

	ctrl.SetLogger(zap.New(zap.UseDevMode(true), zap.WriteTo(os.Stderr)))
	serving := env.WebhookInstallOptions
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 envtest.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		WebhookServer: webhook.NewServer(webhook.Options{
			Host: serving.LocalServingHost, Port: serving.LocalServingPort, CertDir: serving.LocalServingCertDir,
		}),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "manager:", err)
		return 1
	}
	if err := backupbucket.AddToManager(mgr, backupbucket.Options{
		Options:                          controller.Options{LocalRoot: localRoot},
		AllowedGeneratedSecretNamespaces: []string{allowedGeneratedSecretNamespace},
	}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := backupentry.AddToManager(mgr, backupentry.Options{Options: controller.Options{LocalRoot: localRoot}}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := backupvalidation.AddToManager(mgr, func(t string) bool { return slices.Contains(builtin.Types(), t) }); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- mgr.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-stopped; err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	}()
	if err := envtest.WaitWebhookServing(net.JoinHostPort(serving.LocalServingHost, strconv.Itoa(serving.LocalServingPort))); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}
