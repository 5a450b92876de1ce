// Package app holds the commands of gardener-etcd. Each command group lives in its own file (shoot.go now;
// seed and local join as siblings) and reaches the cluster through the shared kubeconfig flags.
package app

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/gardener-etcd/gardener-etcd/pkg/apis"
	"github.com/gardener-etcd/gardener-etcd/pkg/version"
)

// NewRootCommand returns gardener-etcd with its subcommands; out receives progress and results, errOut the
// log. Tests execute it in-process with buffers.
func NewRootCommand(out, errOut io.Writer) *cobra.Command {
	g := &globalOptions{}
	root := &cobra.Command{
		Use:           "gardener-etcd",
		Short:         "The Gardener side of etcd: seed bootstrap, shoot etcds, the local seed and operator commands on Etcds",
		Version:       version.Get(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(out)
	root.SetErr(errOut)
	root.PersistentPreRun = func(cmd *cobra.Command, _ []string) { g.setGlobalLogger(cmd.ErrOrStderr()) }
	root.PersistentFlags().StringVar(&g.kubeconfig, "kubeconfig", "", "path to the kubeconfig of the seed (default: $KUBECONFIG, then ~/.kube/config)")
	root.PersistentFlags().BoolVarP(&g.verbose, "verbose", "v", false, "log what the components do (to stderr)")
	root.AddCommand(newShootCommand(g))
	root.AddCommand(newSeedCommand(g))
	root.AddCommand(newLocalCommand(g))
	root.AddCommand(newDemoCommand(g))
	root.AddCommand(newEtcdCommand(g))
	return root
}

// globalOptions are the flags every command shares.
type globalOptions struct {
	kubeconfig string
	verbose    bool
}

// client builds a controller-runtime client for the seed from the kubeconfig flag or the usual defaults.
func (g *globalOptions) client() (client.Client, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = g.kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading the kubeconfig: %w", err)
	}
	return client.New(cfg, client.Options{Scheme: scheme})
}

// context carries a logger to the components: structured logs on stderr with -v, nothing otherwise (the
// command prints its own progress).
func (g *globalOptions) context(cmd *cobra.Command) context.Context {
	return logf.IntoContext(cmd.Context(), g.logger(cmd.ErrOrStderr()))
}

// scheme knows the built-in kinds, CRDs and both project API groups.
var scheme = apis.NewScheme()
