// Command etcd is the etcd server built from the pinned go.etcd.io/etcd/server/v3 module, for the envtest
// suites and the local seed's control plane.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
