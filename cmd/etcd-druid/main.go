// Command etcd-druid is the etcd operator: it turns Etcd resources into running, backed-up, self-healing etcd clusters (controllers and webhooks follow in later issues).
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/gardener-etcd/gardener-etcd/pkg/version"
)

func main() {
	root := &cobra.Command{
		Use:           "etcd-druid",
		Short:         "Operator that runs etcd clusters from Etcd resources",
		Version:       version.Get(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
