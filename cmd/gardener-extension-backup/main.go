// Command gardener-extension-backup is the backup provider extension: BackupBucket and BackupEntry
// controllers, the etcd-backup secret relay and the EnsureETCD webhook (see package app).
package main

import (
	"fmt"
	"os"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/gardener-etcd/gardener-etcd/cmd/gardener-extension-backup/app"
)

func main() {
	if err := app.NewCommand().ExecuteContext(ctrl.SetupSignalHandler()); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
