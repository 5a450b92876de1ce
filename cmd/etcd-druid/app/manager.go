package app

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	druidv1alpha1 "github.com/gardener-etcd/gardener-etcd/pkg/apis/druid/v1alpha1"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/compaction"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/copybackupstask"
	etcdcontroller "github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/etcd"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/etcdopstask"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/controller/secret"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/coreevents"
	"github.com/gardener-etcd/gardener-etcd/pkg/webhook/etcdvalidation"
	"github.com/gardener-etcd/gardener-etcd/pkg/webhook/protection"
)

// Scheme knows the Kubernetes built-in kinds and druid's API group.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(druidv1alpha1.AddToScheme(s))
	return s
}

// NewManager builds the manager and registers the Etcd and secret finalizer controllers, the compaction,
// copy-backups and ops-task controllers when enabled, the webhooks when enabled, and the health checks. Nothing runs until Start.
func NewManager(ctx context.Context, cfg Config, restConfig *rest.Config) (manager.Manager, error) {
	opts := etcdcontroller.NewManagerOptions(ctrl.Options{
		Scheme:                        Scheme(),
		Metrics:                       metricsserver.Options{BindAddress: cfg.MetricsBindAddress},
		HealthProbeBindAddress:        cfg.HealthProbeBindAddress,
		LeaderElection:                cfg.LeaderElection,
		LeaderElectionID:              cfg.LeaderElectionID,
		LeaderElectionNamespace:       cfg.LeaderElectionNamespace,
		LeaderElectionResourceLock:    cfg.LeaderElectionResourceLock,
		LeaseDuration:                 ptr.To(cfg.LeaderElectionLeaseDuration),
		RenewDeadline:                 ptr.To(cfg.LeaderElectionRenewDeadline),
		RetryPeriod:                   ptr.To(cfg.LeaderElectionRetryPeriod),
		LeaderElectionReleaseOnCancel: true, // a rolling druid update hands over without waiting for the lease to expire
		GracefulShutdownTimeout:       ptr.To(cfg.GracefulShutdownTimeout),
	})
	// Compaction and copy-backups Jobs are druid-labelled like the Etcd's other objects; never cache every
	// Job of the seed.
	opts.Cache.ByObject[&batchv1.Job{}] = cache.ByObject{Label: etcdcontroller.ManagedBySelector()}
	if cfg.Webhooks.Enabled {
		opts.WebhookServer = webhook.NewServer(webhook.Options{Host: cfg.Webhooks.Host, Port: cfg.Webhooks.Port, CertDir: cfg.Webhooks.CertDir})
	}
	base, err := ctrl.NewManager(restConfig, opts)
	if err != nil {
		return nil, fmt.Errorf("creating the manager: %w", err)
	}
	// Every controller's events as core/v1 Events: a role granting only core events (Gardener's for
	// etcd-druid) must not lose them.
	mgr, err := coreevents.Wrap(ctx, base, restConfig)
	if err != nil {
		return nil, err
	}

	if err := etcdcontroller.AddToManager(ctx, mgr, cfg.Etcd); err != nil {
		return nil, fmt.Errorf("adding the etcd controller: %w", err)
	}
	if err := secret.AddToManager(ctx, mgr, cfg.Secret); err != nil {
		return nil, fmt.Errorf("adding the secret finalizer controller: %w", err)
	}
	if err := compaction.AddToManager(mgr, cfg.Compaction); err != nil {
		return nil, fmt.Errorf("adding the compaction controller: %w", err)
	}
	if cfg.EnableCopyBackupsTask {
		if err := copybackupstask.AddToManager(mgr, cfg.CopyBackupsTask); err != nil {
			return nil, fmt.Errorf("adding the copy-backups-task controller: %w", err)
		}
	}
	if err := etcdopstask.AddToManager(mgr, cfg.EtcdOpsTask); err != nil {
		return nil, fmt.Errorf("adding the etcd-ops-task controller: %w", err)
	}

	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return nil, err
	}
	if err := addWebhooks(mgr, cfg.Webhooks); err != nil {
		return nil, err
	}
	return mgr, nil
}

// addWebhooks registers the webhooks w switches on. The Etcd validation webhook runs wherever the
// webhook server does; the component protection webhook has its own switch, so that an operator who
// turns the protection off (e.g. to repair objects by hand) keeps the validation of every Etcd write.
func addWebhooks(mgr manager.Manager, w WebhookConfig) error {
	if !w.Enabled {
		return nil
	}
	if err := etcdvalidation.AddToManager(mgr); err != nil {
		return fmt.Errorf("adding the etcd validation webhook: %w", err)
	}
	if w.ComponentProtection {
		protection.AddToManager(mgr, w.ReconcilerServiceAccount, w.ExemptServiceAccounts, w.PodControllerUsers, w.GarbageCollectorUsers)
	}
	// Not ready until the webhook server serves TLS: the apiserver would otherwise fail admission calls.
	return mgr.AddReadyzCheck("webhook-server", mgr.GetWebhookServer().StartedChecker())
}
