// Command etcd-3.5 is the etcd v3.5.35 server built from its go.etcd.io/etcd/server/v3 module: the old
// version the version-stepping tests write data with (3.5) or step data through (3.6) before etcd 3.7 opens it
// (docs/design.md, "etcd version stepping").
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
