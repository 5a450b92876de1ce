package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/gardener-etcd/gardener-etcd/pkg/seedworkflow"
)

func newDemoCommand(g *globalOptions) *cobra.Command {
	o := &localOptions{globalOptions: g}
	var (
		keep    bool
		timeout time.Duration
		keys    int
	)
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "The whole workflow on the local seed: druid and the backup extension as pods, etcd-main backed up to S3, scaled to 3 with peer TLS (needs root, make tools and make images)",
		Long: `Starts the local seed with its S3 server, bootstraps etcd-druid and the backup extension from their
charts as pods, creates a shoot namespace with a BackupBucket and BackupEntry, deploys etcd-main (one
member, backed up) and etcd-events through the Gardener-side component, writes keys over TLS, scales
etcd-main to three members with peer TLS, takes a full snapshot and prints a summary. Then the seed is
torn down, or kept running with --keep until Ctrl-C or "gardener-etcd local down".`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.checkStateDir(); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			log := o.logger(cmd.ErrOrStderr())
			ctx = logf.IntoContext(ctx, log)
			env, timer, runErr := seedworkflow.Run(ctx, seedworkflow.Options{StateDir: o.stateDir, Nodes: o.nodes, Timeout: timeout, Keys: keys, Out: out, Log: log})
			if env == nil {
				return runErr
			}
			// The summary and the teardown run also when the run was interrupted.
			final := context.WithoutCancel(ctx)
			seedworkflow.PrintSummary(final, out, env, timer.Steps)
			if runErr != nil {
				fmt.Fprintf(out, "\nThe demo failed: %v\n", runErr)
			}
			if keep && ctx.Err() == nil {
				fmt.Fprintf(out, "\nThe seed keeps running (pid %d); stop it with Ctrl-C or: gardener-etcd local down --state-dir %s\n", os.Getpid(), env.Seed.StateDir())
				<-ctx.Done()
			}
			fmt.Fprintln(out, "\nStopping the local seed ...")
			if err := env.Seed.Stop(final); err != nil {
				return errors.Join(runErr, err)
			}
			fmt.Fprintln(out, "Local seed stopped; nothing left behind.")
			return runErr
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.stateDir, "state-dir", defaultLocalStateDir(), "directory of the seed (kubeconfig, logs, volumes); removed at the end")
	f.IntVar(&o.nodes, "nodes", 3, "number of nodes (one etcd member per zone)")
	f.BoolVar(&keep, "keep", false, "keep the seed running after the summary, until interrupted or `local down`")
	f.DurationVar(&timeout, "timeout", 5*time.Minute, "how long each step may wait")
	f.IntVar(&keys, "keys", 100, "number of keys written into etcd-main")
	return cmd
}
