// Command gardener-etcd is the operator's CLI for the Gardener side: shoot etcd deploy/scale/snapshot/destroy,
// and (in later issues) seed bootstrap and the local seed.
package main

import (
	"fmt"
	"os"

	"github.com/gardener-etcd/gardener-etcd/cmd/gardener-etcd/app"
)

func main() {
	if err := app.NewRootCommand(os.Stdout, os.Stderr).Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
