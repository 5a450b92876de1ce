// Command gardener-extension-backup is the backup provider extension: BackupBucket and BackupEntry controllers and the etcd-backup secret relay (wired in a later issue).
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/gardener-etcd/gardener-etcd/pkg/version"
)

func main() {
	root := &cobra.Command{
		Use:           "gardener-extension-backup",
		Short:         "Gardener provider extension for BackupBuckets and BackupEntries",
		Version:       version.Get(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
