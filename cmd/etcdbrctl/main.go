// Command etcdbrctl is the backup-restore sidecar (`server`) and its tools (snapshot, restore, compact,
// copy).
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/gardener-etcd/gardener-etcd/cmd/etcdbrctl/app"
	"github.com/gardener-etcd/gardener-etcd/pkg/backuprestore/sidecar"
	"github.com/gardener-etcd/gardener-etcd/pkg/version"
)

func main() {
	root := &cobra.Command{
		Use:           "etcdbrctl",
		Short:         "Backup-restore sidecar and tooling for etcd",
		Version:       version.Get(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(sidecar.NewCommand(sidecar.Run))
	root.AddCommand(app.ToolCommands()...)
	root.AddCommand(app.SurvivingDataCommands()...)
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
