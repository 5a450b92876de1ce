package sidecar

import (
	"context"
	"os/signal"
	"syscall"

	"github.com/go-logr/logr"
	"github.com/go-logr/zapr"
	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/gardener-etcd/gardener-etcd/pkg/ignoredflags"
)

// NewCommand is `etcdbrctl server`. run is Run in production; tests pass their own to see the parsed
// options.
func NewCommand(run func(ctx context.Context, o Options, log logr.Logger) error) *cobra.Command {
	opts := DefaultOptions()
	var bound *boundFlags
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Run the backup-restore sidecar of an etcd member",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := bound.complete(&opts); err != nil {
				return err
			}
			zl, err := zap.NewProduction()
			if err != nil {
				return err
			}
			defer func() { _ = zl.Sync() }()
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			log := zapr.NewLogger(zl).WithName("etcdbrctl")
			ignoredflags.Log(log, opts.IgnoredFlags())
			return run(ctx, opts, log)
		},
	}
	bound = opts.AddFlags(cmd.Flags())
	return cmd
}
