// Command etcd-3.4 is the etcd 3.4.13 server, the oldest version a Gardener landscape runs (wrapper v0.6.x), for
// the version-stepping tests (docs/design.md, "etcd version stepping").
//
// etcd 3.4 is the module go.etcd.io/etcd without a /v3 suffix, so its v3.4.x tags are no module versions the
// proxy serves (a +incompatible version needs a tree without go.mod). Only pseudo-versions of its commits are
// served, and only of commits someone fetched: v0.5.0-alpha.5.0.20200910180754-dd1b699fc489 is the v3.4.13
// release commit. Later 3.4 releases (to v3.4.3x) were not served when this was pinned.
package main

import "go.etcd.io/etcd/etcdmain"

func main() {
	etcdmain.Main()
}
