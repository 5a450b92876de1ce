package main

import (
	"context"
	"os/signal"
	"syscall"

	"github.com/go-logr/logr"
	"github.com/go-logr/zapr"
	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/gardener-etcd/gardener-etcd/pkg/ignoredflags"
	"github.com/gardener-etcd/gardener-etcd/pkg/wrapper"
)

// newStartEtcdCommand runs the wrapper until etcd stops; a graceful stop (SIGTERM, POST /stop) exits 0 so
// that the kubelet simply restarts the container. run is wrapper.Run; tests pass their own.
func newStartEtcdCommand(run func(context.Context, wrapper.Options, logr.Logger) error) *cobra.Command {
	opts := wrapper.DefaultOptions()
	cmd := &cobra.Command{
		Use:   "start-etcd",
		Short: "Initialize through the sidecar and run etcd",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			zl, err := zap.NewProduction()
			if err != nil {
				return err
			}
			defer func() { _ = zl.Sync() }()
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			log := zapr.NewLogger(zl).WithName("etcd-wrapper")
			ignoredflags.Log(log, opts.IgnoredFlags())
			return run(ctx, opts, log)
		},
	}
	opts.AddFlags(cmd.Flags())
	return cmd
}
