package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/etcd"
)

// shootOptions are the flags of every shoot subcommand: which control-plane namespace and etcd role, and how
// long to wait.
type shootOptions struct {
	*globalOptions
	namespace    string
	role         string
	timeout      time.Duration
	pollInterval time.Duration
	wait         bool
}

func newShootCommand(g *globalOptions) *cobra.Command {
	o := &shootOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "shoot",
		Short: "Deploy, scale, snapshot and destroy the etcds of one shoot control-plane namespace",
	}
	f := cmd.PersistentFlags()
	f.StringVarP(&o.namespace, "namespace", "n", "", "control-plane namespace of the shoot (required)")
	f.StringVar(&o.role, "role", "", "etcd role: main or events (default: both; main for snapshot)")
	f.DurationVar(&o.timeout, "timeout", etcd.DefaultWaitTimeout, "how long to wait for the BackupEntry, missing secrets and the etcds")
	f.DurationVar(&o.pollInterval, "poll-interval", 2*time.Second, "how often to look while waiting")
	f.BoolVar(&o.wait, "wait", true, "wait until the etcds are ready (deploy, scale) or gone (destroy)")
	_ = cmd.MarkPersistentFlagRequired("namespace")
	cmd.AddCommand(newShootDeployCommand(o), newShootScaleCommand(o), newShootSnapshotCommand(o), newShootDestroyCommand(o))
	return cmd
}

// roles are the roles a command acts on: --role, or both.
func (o *shootOptions) roles() ([]string, error) {
	switch o.role {
	case "":
		return []string{etcd.RoleMain, etcd.RoleEvents}, nil
	case etcd.RoleMain, etcd.RoleEvents:
		return []string{o.role}, nil
	}
	return nil, fmt.Errorf("--role must be %s or %s, not %q", etcd.RoleMain, etcd.RoleEvents, o.role)
}

// values are the component values common to every shoot command.
func (o *shootOptions) values(role string) etcd.Values {
	return etcd.Values{Role: role, WaitTimeout: o.timeout, WaitInterval: o.pollInterval}
}

// waitReady waits for each etcd and prints the outcome.
func (o *shootOptions) waitReady(ctx context.Context, out io.Writer, c client.Client, roles []string) error {
	if !o.wait {
		return nil
	}
	for _, role := range roles {
		fmt.Fprintf(out, "Waiting for %s to become ready ...\n", etcd.Name(role))
		if err := etcd.New(c, o.namespace, o.values(role)).Wait(ctx); err != nil {
			return err
		}
		fmt.Fprintf(out, "%s is ready\n", etcd.Name(role))
	}
	return nil
}

// finish prints the table of the namespace's etcds after a command, also when the command failed, so the
// operator sees the state that the error refers to.
func (o *shootOptions) finish(ctx context.Context, out io.Writer, c client.Client, cmdErr error) error {
	fmt.Fprintln(out)
	if err := printEtcds(ctx, out, c, o.namespace); err != nil {
		return errors.Join(cmdErr, err)
	}
	return cmdErr
}

// deployRetrying retries Deploy while secrets are missing, which is how the shoot flow waits for the
// BackupEntry controller to write etcd-backup; any other error ends it. The timeout bounds the retrying, not
// one Deploy, so a slow Deploy is never cut off half-way.
func (o *shootOptions) deployRetrying(ctx context.Context, out io.Writer, component etcd.Interface, name string) error {
	deadline := time.Now().Add(o.timeout)
	var lastMissing error
	for {
		err := component.Deploy(ctx)
		var missing *etcd.MissingSecretError
		if !errors.As(err, &missing) {
			return err
		}
		if lastMissing == nil || lastMissing.Error() != err.Error() {
			fmt.Fprintf(out, "  %v\n", err)
		}
		lastMissing = err
		if time.Now().After(deadline) {
			return fmt.Errorf("deploying %s: still missing after %s: %w", name, o.timeout, err)
		}
		select {
		case <-ctx.Done():
			return errors.Join(ctx.Err(), err)
		case <-time.After(o.pollInterval):
		}
	}
}
