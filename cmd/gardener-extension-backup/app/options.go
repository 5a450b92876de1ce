// Package app is the gardener-extension-backup command: one controller-runtime manager running the
// BackupBucket and BackupEntry controllers for the enabled provider types and serving the EnsureETCD
// webhook and the validation webhook of BackupEntries and BackupBuckets. The flags bind to Options, which
// tests fill directly.
package app

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/gardener-etcd/gardener-etcd/pkg/backupextension/provider/builtin"
	"github.com/gardener-etcd/gardener-etcd/pkg/webhook/ensureetcd"
)

// Defaults of the flags; the chart passes the same values explicitly.
const (
	DefaultMetricsBindAddress     = ":8080"
	DefaultHealthProbeBindAddress = ":8081"
	DefaultWebhookPort            = 9443
	DefaultLeaderElectionID       = "gardener-extension-backup-leader-election"
	DefaultWorkers                = 5
)

// Options are the command's settings.
type Options struct {
	Kubeconfig              string
	LeaderElection          bool
	LeaderElectionNamespace string
	LeaderElectionID        string
	MetricsBindAddress      string
	HealthProbeBindAddress  string
	Workers                 int
	LocalRoot               string
	ProviderTypes           []string
	// GeneratedSecretNamespaces are namespaces besides garden a BackupBucket may name for its generated
	// secret (backupbucket.GeneratedSecretNamespaceAnnotation).
	GeneratedSecretNamespaces []string
	EnableWebhooks            bool
	WebhookPort               int
	WebhookCertDir            string
	// WebhookHost is the address the webhook server binds (all interfaces when empty); tests bind 127.0.0.1.
	WebhookHost string

	storage map[string]*storageFlags
}

// storageFlags are the raw flag values of one role's EnsureETCD defaults.
type storageFlags struct {
	class, capacity string
}

// NewOptions returns Options with the defaults.
func NewOptions() *Options {
	return &Options{
		LeaderElectionID:       DefaultLeaderElectionID,
		MetricsBindAddress:     DefaultMetricsBindAddress,
		HealthProbeBindAddress: DefaultHealthProbeBindAddress,
		Workers:                DefaultWorkers,
		ProviderTypes:          builtin.Types(),
		EnableWebhooks:         true,
		WebhookPort:            DefaultWebhookPort,
		storage:                map[string]*storageFlags{"main": {}, "events": {}},
	}
}

// AddFlags binds the options to fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "path to a kubeconfig (in-cluster config when empty)")
	fs.BoolVar(&o.LeaderElection, "leader-election", o.LeaderElection, "elect a leader so that only one replica reconciles")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", o.LeaderElectionNamespace, "namespace of the leader election lease (the pod's namespace when empty)")
	fs.StringVar(&o.LeaderElectionID, "leader-election-id", o.LeaderElectionID, "name of the leader election lease")
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", o.MetricsBindAddress, "address of the metrics endpoint (0 disables it)")
	fs.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", o.HealthProbeBindAddress, "address of /healthz and /readyz (0 disables them)")
	fs.IntVar(&o.Workers, "workers", o.Workers, "parallel reconciles per controller")
	fs.StringVar(&o.LocalRoot, "local-root", o.LocalRoot, "directory holding the buckets of provider type local")
	fs.StringSliceVar(&o.ProviderTypes, "provider-types", o.ProviderTypes, "provider types this instance handles ("+strings.Join(builtin.Types(), ", ")+")")
	fs.StringSliceVar(&o.GeneratedSecretNamespaces, "generated-secret-namespaces", o.GeneratedSecretNamespaces, "namespaces besides garden a BackupBucket may name for its generated secret (annotation backupbucket.extensions.gardener.cloud/generated-secret-namespace)")
	fs.BoolVar(&o.EnableWebhooks, "enable-webhooks", o.EnableWebhooks, "serve the EnsureETCD webhook and the BackupEntry/BackupBucket validation webhook")
	fs.IntVar(&o.WebhookPort, "webhook-port", o.WebhookPort, "port of the webhook server")
	fs.StringVar(&o.WebhookCertDir, "webhook-cert-dir", o.WebhookCertDir, "directory with tls.crt and tls.key of the webhook server")
	for _, role := range []string{"main", "events"} {
		s := o.storage[role]
		fs.StringVar(&s.class, "etcd-"+role+"-storage-class", "", "storage class EnsureETCD sets on a new etcd-"+role)
		fs.StringVar(&s.capacity, "etcd-"+role+"-storage-capacity", "", "minimum storage capacity EnsureETCD sets on etcd-"+role+" (e.g. 25Gi)")
	}
}

// SetStorageDefaults sets the EnsureETCD defaults of a role (main or events) as the flags would.
func (o *Options) SetStorageDefaults(role, class, capacity string) {
	o.storage[role] = &storageFlags{class: class, capacity: capacity}
}

// EnsureETCDConfig turns the storage flags into the webhook's configuration.
func (o *Options) EnsureETCDConfig() (ensureetcd.Config, error) {
	var cfg ensureetcd.Config
	for role, target := range map[string]*ensureetcd.RoleDefaults{"main": &cfg.Main, "events": &cfg.Events} {
		s := o.storage[role]
		if s == nil {
			continue
		}
		target.StorageClassName = s.class
		if s.capacity != "" {
			q, err := resource.ParseQuantity(s.capacity)
			if err != nil {
				return cfg, fmt.Errorf("--etcd-%s-storage-capacity: %w", role, err)
			}
			target.StorageCapacity = &q
		}
	}
	return cfg, cfg.Validate()
}

// Validate rejects settings the manager cannot run with.
func (o *Options) Validate() error {
	var errs []error
	if o.Workers < 1 {
		errs = append(errs, fmt.Errorf("--workers must be at least 1, got %d", o.Workers))
	}
	if len(o.ProviderTypes) == 0 {
		errs = append(errs, errors.New("--provider-types must name at least one provider type"))
	}
	for _, t := range o.ProviderTypes {
		if !slices.Contains(builtin.Types(), t) {
			errs = append(errs, fmt.Errorf("--provider-types: unknown provider type %q (supported: %s)", t, strings.Join(builtin.Types(), ", ")))
		}
	}
	if slices.Contains(o.ProviderTypes, "local") && o.LocalRoot == "" {
		errs = append(errs, errors.New("--local-root is required when provider type local is enabled"))
	}
	for _, namespace := range o.GeneratedSecretNamespaces {
		if msgs := validation.IsDNS1123Label(namespace); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("--generated-secret-namespaces: %q is no namespace name: %s", namespace, strings.Join(msgs, "; ")))
		}
	}
	if o.EnableWebhooks && (o.WebhookPort < 1 || o.WebhookPort > 65535) {
		errs = append(errs, fmt.Errorf("--webhook-port must be a TCP port, got %d", o.WebhookPort))
	}
	if _, err := o.EnsureETCDConfig(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
