package app

import (
	"context"
	"flag"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/gardener-etcd/gardener-etcd/pkg/version"
)

// NewCommand returns the etcd-druid root command. It runs until the context given to ExecuteContext is
// cancelled (main cancels it on SIGTERM/SIGINT), then shuts down gracefully: controllers finish their
// running reconciles within --graceful-shutdown-timeout and the leader election Lease is released.
func NewCommand() *cobra.Command {
	flagDefaults := DefaultConfig()
	var configFile string
	zapOpts := zap.Options{}
	cmd := &cobra.Command{
		Use:   "etcd-druid",
		Short: "Operator that runs etcd clusters from Etcd resources",
		Long: "etcd-druid turns Etcd resources into running, backed-up, self-healing etcd clusters: the Etcd controller " +
			"(components, status from member leases, seed 002 healing), the secret finalizer, compaction and copy-backups " +
			"controllers, and the Etcd validation and component protection webhooks.",
		Version:       version.Get(),
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := ResolveConfig(cmd.Flags(), configFile)
			if err != nil {
				return err
			}
			ctx := log.IntoContext(cmd.Context(), zap.New(zap.UseFlagOptions(&zapOpts)))
			log.SetLogger(log.FromContext(ctx))
			restConfig, err := restConfigFor(cfg)
			if err != nil {
				return err
			}
			return Run(ctx, cfg, restConfig)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&configFile, "config", "", "YAML configuration file (see app.File); flags given on the command line override it")
	bindFlags(fs, &flagDefaults)
	logFlags := flag.NewFlagSet("log", flag.ContinueOnError)
	zapOpts.BindFlags(logFlags)
	fs.AddGoFlagSet(logFlags)
	return cmd
}

// ResolveConfig builds the configuration from the defaults, the --config file (when given) and the flags
// set on the command line, in that order of precedence from low to high, and completes the fields that derive
// from others, so that the result is exactly what Run validates and runs.
func ResolveConfig(fs *pflag.FlagSet, configFile string) (Config, error) {
	cfg := DefaultConfig()
	if configFile != "" {
		if err := loadFile(configFile, &cfg); err != nil {
			return cfg, err
		}
	}
	if err := applySetFlags(fs, &cfg); err != nil {
		return cfg, fmt.Errorf("applying flags: %w", err)
	}
	cfg.complete()
	return cfg, nil
}

// Run validates cfg, builds the manager with every controller and webhook, and runs it until ctx ends.
func Run(ctx context.Context, cfg Config, restConfig *rest.Config) error {
	cfg.complete()
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("invalid configuration: %w", err)
	}
	mgr, err := NewManager(ctx, cfg, restConfig)
	if err != nil {
		return err
	}
	log.FromContext(ctx).Info("Starting etcd-druid", "version", version.Get(), "leaderElection", cfg.LeaderElection,
		"webhooks", cfg.Webhooks.Enabled, "backupCompaction", cfg.Compaction.EnableBackupCompaction, "etcdWorkers", cfg.Etcd.Workers)
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("running the manager: %w", err)
	}
	log.FromContext(ctx).Info("etcd-druid stopped")
	return nil
}
