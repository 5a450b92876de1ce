// Package app is the etcd-druid command: its configuration (flags, and an optional --config file in the
// upstream etcd-druid's OperatorConfiguration format, both mapped onto Config), the manager it builds (cache limited to druid's objects, leader election, metrics, health
// probes, webhook server) and the controllers and webhooks it registers. It lives apart from main so that
// tests can run the whole setup in-process against envtest with a context they cancel.
package app

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
	"github.com/gardener-etcd/gardener-etcd/pkg/webhook/protection"
)

// LeaderElectionID is the default name of the Lease the druid replicas elect their leader with (the
// upstream druid's default resourceName).
const LeaderElectionID = "druid-leader-election"

// Defaults of the process-level settings (the controllers' defaults live in pkg/druid/config). Where the
// upstream etcd-druid has the same setting, the default is its default, except the client rate limit
// (restconfig.go) and leader election being on (see DefaultConfig).
const (
	DefaultMetricsBindAddress      = ":8080"
	DefaultHealthProbeBindAddress  = ":8081"
	DefaultWebhookPort             = 9443
	DefaultWebhookCertDir          = "/etc/webhook-server-tls"
	DefaultGracefulShutdownTimeout = 30 * time.Second
	// The leader election timings are controller-runtime's defaults, which are also upstream druid's.
	DefaultLeaderElectionLeaseDuration = 15 * time.Second
	DefaultLeaderElectionRenewDeadline = 10 * time.Second
	DefaultLeaderElectionRetryPeriod   = 2 * time.Second
	// DefaultLeaderElectionResourceLock is the only lock kind controller-runtime still offers.
	DefaultLeaderElectionResourceLock = "leases"
)

// Config is everything etcd-druid runs with. Flags and the --config file (an OperatorConfiguration, see
// configfile.go) fill the same struct; a flag set on the command line wins over the file, the file over the
// defaults.
type Config struct {
	// Kubeconfig is the path of a kubeconfig; empty means in-cluster or $KUBECONFIG.
	Kubeconfig string
	// ClientConnection is the client-side rate limit towards the apiserver.
	ClientConnection ClientConnection
	// LeaderElection makes only one druid replica reconcile at a time.
	LeaderElection bool
	// LeaderElectionNamespace holds the leader election Lease; empty means druid's own namespace.
	LeaderElectionNamespace string
	// LeaderElectionID is the name of the leader election Lease.
	LeaderElectionID string
	// LeaderElectionResourceLock is the kind of lock; only "leases".
	LeaderElectionResourceLock string
	// LeaderElectionLeaseDuration, LeaderElectionRenewDeadline and LeaderElectionRetryPeriod are the
	// leader election's timings: how long a lease holds without renewal, how long the leader keeps trying
	// to renew before it gives up leading, and how often the candidates try.
	LeaderElectionLeaseDuration time.Duration
	LeaderElectionRenewDeadline time.Duration
	LeaderElectionRetryPeriod   time.Duration
	// MetricsBindAddress serves Prometheus metrics ("0" disables).
	MetricsBindAddress string
	// HealthProbeBindAddress serves /healthz and /readyz ("0" disables).
	HealthProbeBindAddress string
	// GracefulShutdownTimeout bounds how long running reconciles may take after SIGTERM.
	GracefulShutdownTimeout time.Duration
	// Log is the log level and format from the --config file; the --zap-* flags win over it.
	Log LogConfig

	// Etcd configures the Etcd controller, including the images and the member grace periods.
	Etcd config.EtcdController
	// Secret configures the secret finalizer controller (always on).
	Secret config.SecretController
	// Compaction configures the compaction controller (off unless EnableBackupCompaction).
	Compaction config.CompactionController
	// EnableCopyBackupsTask runs the EtcdCopyBackupsTask controller (on unless switched off).
	EnableCopyBackupsTask bool
	// CopyBackupsTask configures the EtcdCopyBackupsTask controller.
	CopyBackupsTask config.CopyBackupsTaskController
	// EtcdOpsTask configures the EtcdOpsTask controller (on unless disabled).
	EtcdOpsTask config.EtcdOpsTaskController
	// Webhooks configures the validation and protection webhooks.
	Webhooks WebhookConfig

	// IgnoredSettings are the fields of the --config file that were accepted but have no effect here; Run
	// logs them once.
	IgnoredSettings []IgnoredSetting
}

// LogConfig is the OperatorConfiguration's logging section.
type LogConfig struct {
	// Level is debug, info or error; empty keeps the --zap-log-level default (info).
	Level string
	// Format is json or text; empty keeps the --zap-encoder default (json).
	Format string
	// source is the file's key the settings came from (logging or logConfiguration), for error messages.
	source string
}

// Validate accepts upstream druid's values only.
func (l LogConfig) Validate() error {
	key := l.source
	if key == "" {
		key = "logging"
	}
	var errs []error
	if !slices.Contains([]string{"", "debug", "info", "error"}, l.Level) {
		errs = append(errs, fmt.Errorf("%s.logLevel must be one of debug, info, error; got %q", key, l.Level))
	}
	if !slices.Contains([]string{"", "json", "text"}, l.Format) {
		errs = append(errs, fmt.Errorf("%s.logFormat must be one of json, text; got %q", key, l.Format))
	}
	return errors.Join(errs...)
}

// WebhookConfig configures druid's webhook server and the component protection webhook.
type WebhookConfig struct {
	// Enabled runs the webhook server with the Etcd validation webhook (and the component protection
	// webhook when ComponentProtection is on). A file turns it on with server.webhooks (the server upstream
	// druid always runs) or webhooks.etcdComponentProtection.enabled: true.
	Enabled bool
	// ComponentProtection serves the component protection webhook besides the validation (the file's
	// webhooks.etcdComponentProtection.enabled). Off, druid's objects may be changed by anyone allowed by
	// RBAC, while Etcd writes are still validated.
	ComponentProtection bool
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
	// PodControllerUsers are the users the seed's kube-controller-manager creates pods as
	// (protection.DefaultPodControllerUsers by default): their member pods go to the webhook entry that
	// fails open, and the StatefulSet's pods they create carry member labels. The protection webhook
	// configuration must name the same list (the chart's webhooks.podControllerUsers renders both).
	PodControllerUsers []string
	// GarbageCollectorUsers are the users the seed's garbage collector runs as
	// (protection.DefaultGarbageCollectorUsers by default): only they, druid and the exempt users may take
	// the "orphan" finalizer off a protected object, so that druid's recreation of a StatefulSet (deleted
	// with its pods orphaned) is finished by the collector and by nobody who could cascade to the pods.
	GarbageCollectorUsers []string
}

// DefaultConfig is the configuration before any file or flag is applied.
func DefaultConfig() Config {
	c := Config{
		// On, unlike upstream druid's default (off): our chart runs two replicas, and a rolling update
		// runs two at once, which must not both reconcile.
		LeaderElection:              true,
		LeaderElectionID:            LeaderElectionID,
		LeaderElectionResourceLock:  DefaultLeaderElectionResourceLock,
		LeaderElectionLeaseDuration: DefaultLeaderElectionLeaseDuration,
		LeaderElectionRenewDeadline: DefaultLeaderElectionRenewDeadline,
		LeaderElectionRetryPeriod:   DefaultLeaderElectionRetryPeriod,
		MetricsBindAddress:          DefaultMetricsBindAddress,
		HealthProbeBindAddress:      DefaultHealthProbeBindAddress,
		GracefulShutdownTimeout:     DefaultGracefulShutdownTimeout,
		Webhooks: WebhookConfig{Port: DefaultWebhookPort, CertDir: DefaultWebhookCertDir, ComponentProtection: true,
			PodControllerUsers:    slices.Clone(protection.DefaultPodControllerUsers),
			GarbageCollectorUsers: slices.Clone(protection.DefaultGarbageCollectorUsers)},
		ClientConnection: ClientConnection{QPS: DefaultClientQPS, Burst: DefaultClientBurst},
		// On, unlike upstream druid's default: Gardener's control plane migration needs it, and the
		// controller does nothing until an EtcdCopyBackupsTask is created.
		EnableCopyBackupsTask: true,
		EtcdOpsTask:           config.DefaultEtcdOpsTaskController(),
	}
	c.Etcd.Default()
	c.Secret.Default()
	c.Compaction.Default()
	c.CopyBackupsTask.Default()
	return c
}

// complete fills what derives from other fields: the Jobs of the compaction and copy-backups controllers
// run the backup-restore image unless they got their own, and mount Local stores within the Etcd
// controller's limit; druid's namespace defaults to the one it runs in.
func (c *Config) complete() {
	if c.Compaction.BackupRestoreImage == "" {
		c.Compaction.BackupRestoreImage = c.Etcd.Images.BackupRestore
	}
	if c.CopyBackupsTask.BackupRestoreImage == "" {
		c.CopyBackupsTask.BackupRestoreImage = c.Etcd.Images.BackupRestore
	}
	// One setting of which images are ours for every pod druid renders etcdbrctl into.
	c.Compaction.ImageCompatibility = c.Etcd.Images.Compatibility
	// One limit for every pod druid mounts a Local store into.
	c.Compaction.LocalBackup = c.Etcd.LocalBackup
	c.CopyBackupsTask.LocalBackup = c.Etcd.LocalBackup
	if c.Etcd.BackupPortAccess.DruidNamespace == "" {
		c.Etcd.BackupPortAccess.DruidNamespace = inClusterNamespace()
	}
}

// serviceAccountNamespaceFile is where the kubelet puts the namespace of a pod's service account.
const serviceAccountNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// inClusterNamespace is druid's namespace when it runs in a pod (as client-go's and controller-runtime's
// in-cluster configuration find it), else empty.
func inClusterNamespace() string {
	ns, err := os.ReadFile(serviceAccountNamespaceFile)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(ns))
}

// Validate checks the whole configuration at start-up, naming every problem at once.
func (c Config) Validate() error {
	errs := []error{c.ClientConnection.Validate(), c.Etcd.Validate(), c.Secret.Validate(), c.Compaction.Validate(), c.Log.Validate()}
	if c.EtcdOpsTask.Enabled {
		errs = append(errs, c.EtcdOpsTask.Validate())
	}
	if c.EnableCopyBackupsTask {
		errs = append(errs, c.CopyBackupsTask.Validate())
	}
	if c.LeaderElection {
		errs = append(errs, c.validateLeaderElection())
	}
	if c.GracefulShutdownTimeout < 0 {
		errs = append(errs, fmt.Errorf("gracefulShutdownTimeout must not be negative, got %s", c.GracefulShutdownTimeout))
	}
	if c.Webhooks.Enabled {
		if c.Webhooks.Port < 1 || c.Webhooks.Port > 65535 {
			errs = append(errs, fmt.Errorf("webhooks: port must be in 1..65535, got %d", c.Webhooks.Port))
		}
		if c.Webhooks.ComponentProtection && c.Webhooks.ReconcilerServiceAccount == "" {
			errs = append(errs, errors.New("webhooks: reconcilerServiceAccount must be set, or the protection webhook would deny druid itself"))
		}
		if c.Webhooks.ComponentProtection {
			errs = append(errs, protection.ValidatePodControllerUsers(c.Webhooks.PodControllerUsers),
				protection.ValidateGarbageCollectorUsers(c.Webhooks.GarbageCollectorUsers))
		}
	}
	return errors.Join(errs...)
}

// validateLeaderElection checks what controller-runtime's leader elector would refuse at start, naming the
// file's fields.
func (c Config) validateLeaderElection() error {
	var errs []error
	if c.LeaderElectionID == "" {
		errs = append(errs, errors.New("leaderElection.resourceName must not be empty"))
	}
	if c.LeaderElectionResourceLock != DefaultLeaderElectionResourceLock {
		errs = append(errs, fmt.Errorf("leaderElection.resourceLock must be %q, got %q", DefaultLeaderElectionResourceLock, c.LeaderElectionResourceLock))
	}
	if c.LeaderElectionRetryPeriod <= 0 {
		errs = append(errs, fmt.Errorf("leaderElection.retryPeriod must be positive, got %s", c.LeaderElectionRetryPeriod))
	}
	// client-go's leader elector: renewDeadline above 1.2 retry periods (its jitter), below leaseDuration.
	if c.LeaderElectionRenewDeadline <= c.LeaderElectionRetryPeriod*6/5 || c.LeaderElectionLeaseDuration <= c.LeaderElectionRenewDeadline {
		errs = append(errs, fmt.Errorf("leaderElection: need 1.2 × retryPeriod (%s) < renewDeadline (%s) < leaseDuration (%s)",
			c.LeaderElectionRetryPeriod, c.LeaderElectionRenewDeadline, c.LeaderElectionLeaseDuration))
	}
	return errors.Join(errs...)
}
