package app

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gardener-etcd/gardener-etcd/pkg/botanist/druid"
)

// seedOptions are the flags of the seed subcommands.
type seedOptions struct {
	*globalOptions
	namespace          string
	image              string
	etcdWrapperImage   string
	backupRestoreImage string
	timeout            time.Duration
	pollInterval       time.Duration
	wait               bool
}

func newSeedCommand(g *globalOptions) *cobra.Command {
	o := &seedOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "seed",
		Short: "Bootstrap or remove etcd-druid and its CRDs in a seed",
	}
	f := cmd.PersistentFlags()
	f.StringVarP(&o.namespace, "namespace", "n", "garden", "namespace druid runs in")
	f.DurationVar(&o.timeout, "timeout", druid.DefaultWaitTimeout, "how long to wait for druid to become available")
	f.DurationVar(&o.pollInterval, "poll-interval", 2*time.Second, "how often to look while waiting")
	bootstrap := &cobra.Command{
		Use:   "bootstrap",
		Short: "Install the druid CRDs and etcd-druid (spec auto-reconcile off) and wait until it is available",
		Args:  cobra.NoArgs,
		RunE:  o.runBootstrap,
	}
	bf := bootstrap.Flags()
	bf.StringVar(&o.image, "image", "", "etcd-druid image repository[:tag][@digest] (default: the chart's, tagged with its appVersion)")
	bf.StringVar(&o.etcdWrapperImage, "etcd-wrapper-image", "", "etcd-wrapper image of the etcd pods (default: the chart's)")
	bf.StringVar(&o.backupRestoreImage, "backup-restore-image", "", "etcdbrctl image of the etcd pods (default: the chart's)")
	bf.BoolVar(&o.wait, "wait", true, "wait until the CRDs are established and druid is available")
	destroy := &cobra.Command{
		Use:   "destroy",
		Short: "Remove etcd-druid and its CRDs; refused while any Etcd or EtcdCopyBackupsTask exists",
		Args:  cobra.NoArgs,
		RunE:  o.runDestroy,
	}
	cmd.AddCommand(bootstrap, destroy)
	return cmd
}

func (o *seedOptions) component() (druid.Interface, error) {
	c, err := o.seedClient()
	if err != nil {
		return nil, err
	}
	return druid.New(c, o.namespace, druid.Values{
		Image: o.image, EtcdWrapperImage: o.etcdWrapperImage, BackupRestoreImage: o.backupRestoreImage,
		WaitTimeout: o.timeout, WaitInterval: o.pollInterval,
	}), nil
}

func (o *seedOptions) runBootstrap(cmd *cobra.Command, _ []string) error {
	component, err := o.component()
	if err != nil {
		return err
	}
	ctx, out := o.context(cmd), cmd.OutOrStdout()
	fmt.Fprintf(out, "Deploying the druid CRDs and etcd-druid into namespace %s ...\n", o.namespace)
	if err := component.Deploy(ctx); err != nil {
		return fmt.Errorf("seed bootstrap: %w", err)
	}
	fmt.Fprintln(out, "Applied CRDs, RBAC, webhook certificate, Deployment, Service, webhook configurations and PDB")
	if !o.wait {
		return nil
	}
	fmt.Fprintf(out, "Waiting up to %s for etcd-druid to become available ...\n", o.timeout)
	if err := component.Wait(ctx); err != nil {
		return fmt.Errorf("seed bootstrap: %w", err)
	}
	fmt.Fprintf(out, "etcd-druid is available in namespace %s\n", o.namespace)
	return nil
}

func (o *seedOptions) runDestroy(cmd *cobra.Command, _ []string) error {
	component, err := o.component()
	if err != nil {
		return err
	}
	ctx, out := o.context(cmd), cmd.OutOrStdout()
	fmt.Fprintf(out, "Removing etcd-druid from namespace %s ...\n", o.namespace)
	if err := component.Destroy(ctx); err != nil {
		if inUse := (*druid.InUseError)(nil); errors.As(err, &inUse) {
			fmt.Fprintln(out, "Delete every Etcd, EtcdCopyBackupsTask and EtcdOpsTask first (gardener-etcd shoot destroy ...; druid deletes a finished EtcdOpsTask after its TTL).")
		}
		return fmt.Errorf("seed destroy: %w", err)
	}
	fmt.Fprintln(out, "etcd-druid and its CRDs are removed")
	return nil
}

// seedClient is a client whose scheme also knows CustomResourceDefinitions, which only the seed commands
// touch.
func (o *seedOptions) seedClient() (client.Client, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading the kubeconfig: %w", err)
	}
	return client.New(cfg, client.Options{Scheme: scheme})
}
