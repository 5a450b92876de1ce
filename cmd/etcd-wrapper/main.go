// Command etcd-wrapper is the etcd container of an etcd pod: `start-etcd` waits for the backup-restore
// sidecar's initialization and runs embedded etcd with the configuration the sidecar serves (package
// wrapper).
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/gardener-etcd/gardener-etcd/pkg/version"
	"github.com/gardener-etcd/gardener-etcd/pkg/wrapper"
)

func main() {
	root := &cobra.Command{
		Use:           "etcd-wrapper",
		Short:         "Runs etcd with the configuration served by the backup-restore sidecar",
		Version:       version.Get(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newStartEtcdCommand(wrapper.Run))
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
