package app

import (
	"context"
	"fmt"
	"slices"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	extensionsv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/extensions/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/backupvalidation"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/controller"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/controller/backupbucket"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/controller/backupentry"
	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/provider/builtin"
	"github.com/gardener-etcd/gardener-etcd/pkg/version"
	"github.com/gardener-etcd/gardener-etcd/pkg/webhook/ensureetcd"
)

// Scheme holds the kinds the extension reads and writes.
var Scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(druidv1alpha1.AddToScheme(s))
	utilruntime.Must(extensionsv1alpha1.AddToScheme(s))
	return s
}()

// NewCommand returns the gardener-extension-backup root command. It runs until its context is cancelled
// (SIGTERM in main) and returns nil after a clean shutdown.
func NewCommand() *cobra.Command {
	o := NewOptions()
	cmd := &cobra.Command{
		Use:           "gardener-extension-backup",
		Short:         "Gardener provider extension for BackupBuckets, BackupEntries, their validation and the EnsureETCD webhook",
		Version:       version.Get(),
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			logf.SetLogger(zap.New(zap.WriteTo(cmd.ErrOrStderr())))
			cfg, err := o.restConfig()
			if err != nil {
				return err
			}
			return o.Run(cmd.Context(), cfg)
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

func (o *Options) restConfig() (*rest.Config, error) {
	if o.Kubeconfig == "" {
		return ctrl.GetConfig()
	}
	return clientcmd.BuildConfigFromFlags("", o.Kubeconfig)
}

// Run starts the manager with the controllers and the webhooks (EnsureETCD, and the validation of
// BackupEntries and BackupBuckets) and blocks until ctx is cancelled.
func (o *Options) Run(ctx context.Context, cfg *rest.Config) error {
	if err := o.Validate(); err != nil {
		return err
	}
	log := logf.Log.WithName("gardener-extension-backup")
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: Scheme,
		// The controllers read entry and bucket secrets in garden and write etcd-backup into shoot
		// namespaces; caching every Secret of the seed would hold all of them in memory.
		Client:                  client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}},
		LeaderElection:          o.LeaderElection,
		LeaderElectionID:        o.LeaderElectionID,
		LeaderElectionNamespace: o.LeaderElectionNamespace,
		// Hand the lease over at once on a clean shutdown, so a rolling update does not wait out the lease.
		LeaderElectionReleaseOnCancel: true,
		Metrics:                       metricsserver.Options{BindAddress: o.MetricsBindAddress},
		HealthProbeBindAddress:        o.HealthProbeBindAddress,
		WebhookServer: webhook.NewServer(webhook.Options{
			Host: o.WebhookHost, Port: o.WebhookPort, CertDir: o.WebhookCertDir,
		}),
	})
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	common := controller.Options{Providers: builtin.Enabled(o.LocalRoot, o.ProviderTypes), MaxConcurrentReconciles: o.Workers}
	if err := backupbucket.AddToManager(mgr, backupbucket.Options{Options: common, AllowedGeneratedSecretNamespaces: o.GeneratedSecretNamespaces}); err != nil {
		return fmt.Errorf("adding the BackupBucket controller: %w", err)
	}
	if err := backupentry.AddToManager(mgr, backupentry.Options{Options: common}); err != nil {
		return fmt.Errorf("adding the BackupEntry controller: %w", err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	if o.EnableWebhooks {
		webhookCfg, err := o.EnsureETCDConfig()
		if err != nil {
			return err
		}
		if err := ensureetcd.AddToManager(mgr, webhookCfg); err != nil {
			return fmt.Errorf("adding the EnsureETCD webhook: %w", err)
		}
		if err := backupvalidation.AddToManager(mgr, func(t string) bool { return slices.Contains(o.ProviderTypes, t) }); err != nil {
			return fmt.Errorf("adding the BackupEntry and BackupBucket validation webhook: %w", err)
		}
		if err := mgr.AddReadyzCheck("webhook-server", mgr.GetWebhookServer().StartedChecker()); err != nil {
			return err
		}
	} else if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	log.Info("Starting", "version", version.Get(), "providerTypes", o.ProviderTypes, "webhooks", o.EnableWebhooks)
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("running the manager: %w", err)
	}
	log.Info("Stopped")
	return nil
}
