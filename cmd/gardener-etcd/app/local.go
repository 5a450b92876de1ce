package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	s3provider "github.com/gardener-etcd/gardener-etcd/pkg/backupextension/provider/s3"
	"github.com/gardener-etcd/gardener-etcd/pkg/localseed"
)

// localOptions are the flags of `local up` and `local down`.
type localOptions struct {
	*globalOptions
	stateDir string
	nodes    int
	s3       bool
	// networkPolicies: see localseed.Options.NetworkPolicies.
	networkPolicies bool
	detach          bool
	// detachedChild marks the background process `up --detach` starts (hidden flag).
	detachedChild bool
	timeout       time.Duration
}

// defaultLocalStateDir is where `local up` and `local down` meet without --state-dir.
func defaultLocalStateDir() string { return filepath.Join(os.TempDir(), "gardener-etcd-local") }

func newLocalCommand(g *globalOptions) *cobra.Command {
	o := &localOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "local",
		Short: "Run the local seed: a Kubernetes control plane and real nodes (kubelet, containerd, runc) on this machine (needs root)",
	}
	cmd.PersistentFlags().StringVar(&o.stateDir, "state-dir", defaultLocalStateDir(), "directory of the instance (kubeconfig, logs, volumes); removed by down")
	cmd.AddCommand(newLocalUpCommand(o), newLocalDownCommand(o))
	return cmd
}

func newLocalUpCommand(o *localOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start the local seed and keep it running until interrupted (or in the background with --detach)",
		Long: `Starts etcd, kube-apiserver, kube-controller-manager and kube-scheduler, a registry, real nodes
(kubelet, containerd, runc, CNI and kube-proxy, each in its own network namespace), CoreDNS and optionally
an S3 server and NetworkPolicy enforcement (--network-policies: kube-network-policies on every node), all
from bin/ (see make tools). Push the project's images to the registry it prints with
make push REGISTRY=<registry>/<path> INSECURE=1. Without --detach the seed stops on SIGINT/SIGTERM; with --detach it keeps
running in the background until "gardener-etcd local down".`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.detach && !o.detachedChild {
				return o.upDetached(cmd)
			}
			return o.up(cmd)
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.nodes, "nodes", 3, "number of nodes (zones a, b, c, ...)")
	f.BoolVar(&o.s3, "s3", false, "also start an S3 server (versitygw) for backups")
	f.BoolVar(&o.networkPolicies, "network-policies", false, "enforce NetworkPolicies: kube-network-policies on every node")
	f.BoolVar(&o.detach, "detach", false, "start in the background and return once the seed is ready")
	f.BoolVar(&o.detachedChild, detachedChildFlag, false, "")
	_ = f.MarkHidden(detachedChildFlag)
	return cmd
}

func newLocalDownCommand(o *localOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "down",
		Short: "Stop the local seed of --state-dir and remove everything it left behind",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return o.down(cmd) },
	}
	cmd.Flags().DurationVar(&o.timeout, "timeout", 2*time.Minute, "how long a running seed may take to stop before it is killed")
	return cmd
}

// up runs the seed in this process until SIGINT/SIGTERM.
func (o *localOptions) up(cmd *cobra.Command) error {
	out := cmd.OutOrStdout()
	if err := o.checkStateDir(); err != nil {
		return err
	}
	binDir, err := localseed.DefaultBinDir()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := o.logger(cmd.ErrOrStderr())
	fmt.Fprintf(out, "Starting the local seed in %s (%d nodes) ...\n", o.stateDir, o.nodes)
	begin := time.Now()
	seed, err := localseed.Start(ctx, localseed.Options{StateDir: o.stateDir, Nodes: o.nodes, S3: o.s3,
		NetworkPolicies: o.networkPolicies, BinDir: binDir, Log: log})
	if err != nil {
		return err
	}
	printSeed(out, seed, o.stateDir, time.Since(begin), o.detachedChild)
	if o.detachedChild {
		if err := o.detachOutput(out); err != nil {
			_ = seed.Stop(context.Background())
			return err
		}
	}
	<-ctx.Done()
	stop()
	fmt.Fprintln(cmd.OutOrStdout(), "Stopping the local seed ...")
	if err := seed.Stop(context.Background()); err != nil {
		return err
	}
	fmt.Fprintln(cmd.OutOrStdout(), "Local seed stopped; nothing left behind.")
	return nil
}

// checkStateDir refuses a state directory that holds a seed, running or crashed, with the command that
// deals with it.
func (o *localOptions) checkStateDir() error {
	if os.Geteuid() != 0 {
		return errors.New("the local seed needs root: it creates network and mount namespaces")
	}
	in, err := localseed.LookupInstance(o.stateDir)
	if err != nil {
		return nil // no instance: Start checks that the directory is empty
	}
	if in.Running() {
		return fmt.Errorf("a local seed already runs in %s (pid %d); stop it with: gardener-etcd local down --state-dir %s", o.stateDir, in.PID, o.stateDir)
	}
	return fmt.Errorf("%s holds the remains of a local seed that did not stop cleanly; remove them with: gardener-etcd local down --state-dir %s", o.stateDir, o.stateDir)
}

// printSeed tells the user where everything is and how to use it.
func printSeed(out io.Writer, seed *localseed.Seed, stateDir string, took time.Duration, detached bool) {
	fmt.Fprintf(out, "Local seed ready after %s.\n\n", took.Round(100*time.Millisecond))
	fmt.Fprintf(out, "Kubeconfig:  %s\n", seed.Kubeconfig())
	fmt.Fprintf(out, "  export KUBECONFIG=%s\n  kubectl get nodes\n", seed.Kubeconfig())
	fmt.Fprintf(out, "Nodes:       %s (one zone each: a, b, ...)\n", strings.Join(seed.NodeNames(), ", "))
	fmt.Fprintf(out, "API server:  https://%s:6443 (also reachable from pods)\n", seed.BridgeIP())
	fmt.Fprintf(out, "Registry:    %s (plain HTTP; the nodes pull from it)\n", seed.Registry())
	fmt.Fprintf(out, "  make push REGISTRY=%s/gardener-etcd INSECURE=1\n", seed.Registry())
	if s3 := seed.S3(); s3 != nil {
		fmt.Fprintf(out, "S3:          %s (path-style, region %s)\n", s3.Endpoint, s3.Region)
		fmt.Fprintf(out, "  access key %s, secret key %s; buckets are directories of %s\n", s3.AccessKey, s3.SecretKey, s3.Dir)
		fmt.Fprintf(out, "  AWS_ACCESS_KEY_ID=%s AWS_SECRET_ACCESS_KEY=%s aws --endpoint-url %s s3 ls\n", s3.AccessKey, s3.SecretKey, s3.Endpoint)
		fmt.Fprintln(out, "  secret for a BackupBucket <bucket> of type s3 (kubectl with the kubeconfig above; a BackupEntry's is garden/entry-<entry>):")
		fmt.Fprintf(out, "  kubectl create secret generic bucket-<bucket> -n garden --from-literal=%s=%s --from-literal=%s=%s \\\n"+
			"    --from-literal=%s=%s --from-literal=%s=%s --from-literal=%s=true\n",
			s3provider.DataKeyAccessKeyID, s3.AccessKey, s3provider.DataKeySecretAccessKey, s3.SecretKey,
			s3provider.DataKeyRegion, s3.Region, s3provider.DataKeyEndpoint, s3.Endpoint, s3provider.DataKeyForcePathStyle)
	}
	fmt.Fprintf(out, "Logs:        %s\n", filepath.Join(stateDir, "logs"))
	if detached {
		fmt.Fprintf(out, "Running in the background (pid %d); stop it with: gardener-etcd local down --state-dir %s\n", os.Getpid(), stateDir)
	} else {
		fmt.Fprintln(out, "Press Ctrl-C to stop and remove everything.")
	}
}

// down stops the recorded seed (SIGTERM, then SIGKILL after --timeout) and removes whatever it left.
func (o *localOptions) down(cmd *cobra.Command) error {
	out := cmd.OutOrStdout()
	in, err := localseed.LookupInstance(o.stateDir)
	if err != nil {
		if _, statErr := os.Stat(o.stateDir); os.IsNotExist(statErr) {
			fmt.Fprintf(out, "No local seed in %s.\n", o.stateDir)
			return nil
		}
		return err
	}
	if in.Running() {
		fmt.Fprintf(out, "Stopping the local seed (pid %d) ...\n", in.PID)
		if err := stopProcess(cmd.Context(), in, o.timeout); err != nil {
			fmt.Fprintf(out, "%v; removing its leftovers\n", err)
		}
	}
	if _, err := localseed.LookupInstance(o.stateDir); err == nil {
		if err := localseed.Down(cmd.Context(), o.stateDir); err != nil {
			return fmt.Errorf("removing the leftovers of the local seed: %w", err)
		}
	}
	fmt.Fprintf(out, "Local seed in %s removed.\n", o.stateDir)
	return nil
}

// stopProcess sends SIGTERM (the seed tears itself down) and waits; SIGKILL after timeout.
func stopProcess(ctx context.Context, in *localseed.Instance, timeout time.Duration) error {
	if err := syscall.Kill(in.PID, syscall.SIGTERM); err != nil {
		return fmt.Errorf("signalling pid %d: %w", in.PID, err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for in.Running() {
		select {
		case <-ctx.Done():
			_ = syscall.Kill(in.PID, syscall.SIGKILL)
			return fmt.Errorf("the local seed did not stop within %s and was killed", timeout)
		case <-tick.C:
		}
	}
	return nil
}
