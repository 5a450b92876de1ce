// Package app is the etcd-druid command: its configuration (flags and an optional YAML file bound to the
// same struct), the manager it builds (cache limited to druid's objects, leader election, metrics, health
// probes, webhook server) and the controllers and webhooks it registers. It lives apart from main so that
// tests can run the whole setup in-process against envtest with a context they cancel.
package app

import (
	"errors"
	"fmt"
	"time"

	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
)

// LeaderElectionID is the name of the Lease the druid replicas elect their leader with.
const LeaderElectionID = "druid-leader-election"

// Defaults of the process-level settings (the controllers' defaults live in pkg/druid/config).
const (
	DefaultMetricsBindAddress      = ":8080"
	DefaultHealthProbeBindAddress  = ":8081"
	DefaultWebhookPort             = 9443
	DefaultGracefulShutdownTimeout = 30 * time.Second
)

// Config is everything etcd-druid runs with. Flags and the --config file fill the same struct; a flag set
// on the command line wins over the file, the file over the defaults.
type Config struct {
	// Kubeconfig is the path of a kubeconfig; empty means in-cluster or $KUBECONFIG.
	Kubeconfig string
	// ClientConnection is the client-side rate limit towards the apiserver.
	ClientConnection ClientConnection
	// LeaderElection makes only one druid replica reconcile at a time.
	LeaderElection bool
	// LeaderElectionNamespace holds the leader election Lease; empty means druid's own namespace.
	LeaderElectionNamespace string
	// MetricsBindAddress serves Prometheus metrics ("0" disables).
	MetricsBindAddress string
	// HealthProbeBindAddress serves /healthz and /readyz ("0" disables).
	HealthProbeBindAddress string
	// GracefulShutdownTimeout bounds how long running reconciles may take after SIGTERM.
	GracefulShutdownTimeout time.Duration

	// Etcd configures the Etcd controller, including the images and the member grace periods.
	Etcd config.EtcdController
	// Secret configures the secret finalizer controller (always on).
	Secret config.SecretController
	// Compaction configures the compaction controller (off unless EnableBackupCompaction).
	Compaction config.CompactionController
	// CopyBackupsTask configures the EtcdCopyBackupsTask controller (always on).
	CopyBackupsTask config.CopyBackupsTaskController
	// EtcdOpsTask configures the EtcdOpsTask controller (on unless disabled).
	EtcdOpsTask config.EtcdOpsTaskController
	// Webhooks configures the validation and protection webhooks.
	Webhooks WebhookConfig
}

// WebhookConfig configures druid's webhook server and the component protection webhook.
type WebhookConfig struct {
	// Enabled serves the Etcd validation and component protection webhooks.
	Enabled bool
	// Host and Port are where the webhook server listens (empty host: every interface).
	Host string
	Port int
	// CertDir holds tls.crt and tls.key of the serving certificate.
	CertDir string
	// ReconcilerServiceAccount is druid's own user (system:serviceaccount:<ns>:<name>), always allowed to
	// change the components it manages.
	ReconcilerServiceAccount string
	// ExemptServiceAccounts may change druid's components as well (e.g. recovery tooling).
	ExemptServiceAccounts []string
}

// DefaultConfig is the configuration before any file or flag is applied.
func DefaultConfig() Config {
	c := Config{
		LeaderElection:          true,
		MetricsBindAddress:      DefaultMetricsBindAddress,
		HealthProbeBindAddress:  DefaultHealthProbeBindAddress,
		GracefulShutdownTimeout: DefaultGracefulShutdownTimeout,
		Webhooks:                WebhookConfig{Port: DefaultWebhookPort},
		ClientConnection:        ClientConnection{QPS: DefaultClientQPS, Burst: DefaultClientBurst},
		EtcdOpsTask:             config.DefaultEtcdOpsTaskController(),
	}
	c.Etcd.Default()
	c.Secret.Default()
	c.Compaction.Default()
	c.CopyBackupsTask.Default()
	return c
}

// complete fills what derives from other fields: the Jobs of the compaction and copy-backups controllers
// run the backup-restore image unless they got their own, and mount Local stores within the Etcd
// controller's limit.
func (c *Config) complete() {
	if c.Compaction.BackupRestoreImage == "" {
		c.Compaction.BackupRestoreImage = c.Etcd.Images.BackupRestore
	}
	if c.CopyBackupsTask.BackupRestoreImage == "" {
		c.CopyBackupsTask.BackupRestoreImage = c.Etcd.Images.BackupRestore
	}
	// One limit for every pod druid mounts a Local store into.
	c.Compaction.LocalBackup = c.Etcd.LocalBackup
	c.CopyBackupsTask.LocalBackup = c.Etcd.LocalBackup
}

// Validate checks the whole configuration at start-up, naming every problem at once.
func (c Config) Validate() error {
	errs := []error{c.ClientConnection.Validate(), c.Etcd.Validate(), c.Secret.Validate(), c.Compaction.Validate(), c.CopyBackupsTask.Validate(), c.EtcdOpsTask.Validate()}
	if c.GracefulShutdownTimeout < 0 {
		errs = append(errs, fmt.Errorf("gracefulShutdownTimeout must not be negative, got %s", c.GracefulShutdownTimeout))
	}
	if c.Webhooks.Enabled {
		if c.Webhooks.Port < 1 || c.Webhooks.Port > 65535 {
			errs = append(errs, fmt.Errorf("webhooks: port must be in 1..65535, got %d", c.Webhooks.Port))
		}
		if c.Webhooks.ReconcilerServiceAccount == "" {
			errs = append(errs, errors.New("webhooks: reconcilerServiceAccount must be set, or the protection webhook would deny druid itself"))
		}
	}
	return errors.Join(errs...)
}
