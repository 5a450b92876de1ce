// Command etcd-druid is the etcd operator: it turns Etcd resources into running, backed-up, self-healing
// etcd clusters. The command lives in package app; main only wires the signal handling.
package main

import (
	"fmt"
	"os"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/gardener-etcd/gardener-etcd/cmd/etcd-druid/app"
)

func main() {
	// SetupSignalHandler cancels the context on SIGTERM/SIGINT (a second signal exits at once), which lets
	// the manager stop its controllers gracefully and release the leader election Lease.
	if err := app.NewCommand().ExecuteContext(ctrl.SetupSignalHandler()); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
