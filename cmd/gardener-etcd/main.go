// Command gardener-etcd is the operator's CLI for the Gardener side: seed bootstrap, shoot etcd deploy/scale/snapshot/destroy and the local seed (subcommands follow in later issues).
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/gardener-etcd/gardener-etcd/pkg/version"
)

func main() {
	root := &cobra.Command{
		Use:           "gardener-etcd",
		Short:         "The Gardener side of etcd: seed bootstrap, shoot etcds and the local seed",
		Version:       version.Get(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
