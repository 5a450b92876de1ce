// Command etcd-wrapper is the etcd container: it waits for the sidecar's initialization and starts embedded etcd with the served configuration (filled in by a later issue).
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/gardener-etcd/gardener-etcd/pkg/version"
)

func main() {
	root := &cobra.Command{
		Use:           "etcd-wrapper",
		Short:         "Runs etcd with the configuration served by the backup-restore sidecar",
		Version:       version.Get(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
