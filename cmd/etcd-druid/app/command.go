package app

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/gardener-etcd/gardener-etcd/pkg/druid/config"
	"github.com/gardener-etcd/gardener-etcd/pkg/druid/imagevector"
	"github.com/gardener-etcd/gardener-etcd/pkg/version"
)

// NewCommand returns the etcd-druid root command. It runs until the context given to ExecuteContext is
// cancelled (main cancels it on SIGTERM/SIGINT), then shuts down gracefully: controllers finish their
// running reconciles within --graceful-shutdown-timeout and the leader election Lease is released.
func NewCommand() *cobra.Command {
	flagDefaults := DefaultConfig()
	var configFile string
	zapOpts := zap.Options{}
	logFlags := flag.NewFlagSet("log", flag.ContinueOnError)
	cmd := &cobra.Command{
		Use:   "etcd-druid",
		Short: "Operator that runs etcd clusters from Etcd resources",
		Long: "etcd-druid turns Etcd resources into running, backed-up, self-healing etcd clusters: the Etcd controller " +
			"(components, status from member leases, the heal decision table), the secret finalizer, compaction and copy-backups " +
			"controllers, and the Etcd validation and component protection webhooks.",
		Version:       version.Get(),
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := ResolveConfig(cmd.Flags(), configFile, os.Getenv(imagevector.OverrideEnv))
			if err != nil {
				return err
			}
			if err := cfg.Log.Validate(); err != nil {
				return fmt.Errorf("invalid configuration: %w", err)
			}
			if err := applyLogConfig(logFlags, cmd.Flags().Changed, cfg.Log); err != nil {
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
	fs.StringVar(&configFile, "config", "", "upstream etcd-druid's OperatorConfiguration file (apiVersion "+
		OperatorConfigurationAPIVersions[0]+"); flags given on the command line override it")
	bindFlags(fs, &flagDefaults)
	zapOpts.BindFlags(logFlags)
	fs.AddGoFlagSet(logFlags)
	return cmd
}

// applyLogConfig sets the file's log level and format as if they were the --zap-log-level and --zap-encoder
// flags, unless the command line gave that flag (or --zap-devel, which sets both): flags win over the file.
// Upstream's "text" format is zap's console encoder.
func applyLogConfig(logFlags *flag.FlagSet, changed func(name string) bool, lc LogConfig) error {
	if changed("zap-devel") {
		return nil
	}
	if lc.Level != "" && !changed("zap-log-level") {
		if err := logFlags.Set("zap-log-level", lc.Level); err != nil {
			return fmt.Errorf("log level %q: %w", lc.Level, err)
		}
	}
	if lc.Format != "" && !changed("zap-encoder") {
		encoder := lc.Format
		if encoder == "text" {
			encoder = "console"
		}
		if err := logFlags.Set("zap-encoder", encoder); err != nil {
			return fmt.Errorf("log format %q: %w", lc.Format, err)
		}
	}
	return nil
}

// ResolveConfig builds the configuration from the defaults, the --config file (when given: an
// OperatorConfiguration, see loadFile) and the flags
// set on the command line, in that order of precedence from low to high, and completes the fields that derive
// from others, so that the result is exactly what Run validates and runs.
//
// The images of the etcd and backup-restore containers come, from high to low precedence, from the flags,
// the file (upstream's OperatorConfiguration has no image fields, so today never), the image vector at
// imageVectorOverwrite (the value of IMAGEVECTOR_OVERWRITE, "" for none) and the built-in image vector:
// druid deployed by gardenlet (only --config and IMAGEVECTOR_OVERWRITE) starts like upstream druid does.
func ResolveConfig(fs *pflag.FlagSet, configFile, imageVectorOverwrite string) (Config, error) {
	cfg := DefaultConfig()
	if configFile != "" {
		if err := loadFile(configFile, &cfg); err != nil {
			return cfg, err
		}
	}
	if err := applySetFlags(fs, &cfg); err != nil {
		return cfg, fmt.Errorf("applying flags: %w", err)
	}
	if err := defaultImages(&cfg.Etcd.Images, imageVectorOverwrite); err != nil {
		return cfg, err
	}
	cfg.complete()
	return cfg, nil
}

// defaultImages fills the images that neither a flag nor the file set from the image vector.
func defaultImages(images *config.Images, imageVectorOverwrite string) error {
	if images.EtcdWrapper != "" && images.BackupRestore != "" {
		return nil
	}
	vector, err := imagevector.Load(imageVectorOverwrite)
	if err != nil {
		return err
	}
	if images.EtcdWrapper == "" {
		images.EtcdWrapper = vector.Image(imagevector.NameEtcdWrapper)
	}
	if images.BackupRestore == "" {
		images.BackupRestore = vector.Image(imagevector.NameBackupRestore)
	}
	return nil
}

// Run validates cfg, builds the manager with every controller and webhook, and runs it until ctx ends.
func Run(ctx context.Context, cfg Config, restConfig *rest.Config) error {
	cfg.complete()
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("invalid configuration: %w", err)
	}
	logIgnoredSettings(log.FromContext(ctx), cfg.IgnoredSettings)
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

// logIgnoredSettings names, in one line at start-up, the fields of the --config file that were accepted but
// have no effect here, each with its value and the reason.
func logIgnoredSettings(logger logr.Logger, ignored []IgnoredSetting) {
	if len(ignored) == 0 {
		return
	}
	settings := make([]string, 0, len(ignored))
	for _, s := range ignored {
		settings = append(settings, s.String())
	}
	logger.Info("Settings of the configuration file accepted, has no effect", "settings", settings)
}
